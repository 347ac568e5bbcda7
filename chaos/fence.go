package chaos

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
)

// Fence is a resource guarded by fencing tokens, as a storage service that
// a lock protects would be: it accepts a write only if its token is at
// least the highest token it has accepted, and refuses (and counts) the
// others. A holder whose lock was taken over while it was paused or
// partitioned is refused as soon as the new holder has written once.
//
// It is safe for concurrent use. Serve exposes it over TCP to helper
// processes.
type Fence struct {
	mu       sync.Mutex
	highest  int64
	accepted int
	refused  int
	byToken  map[int64]*TokenCount
}

// TokenCount is what the fence did with one token's writes.
type TokenCount struct{ Accepted, Refused int }

// NewFence returns a fence that has seen no token.
func NewFence() *Fence { return &Fence{byToken: map[int64]*TokenCount{}} }

// Write is a write carrying token; it reports whether it was accepted.
func (f *Fence) Write(token int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	tc := f.byToken[token]
	if tc == nil {
		tc = &TokenCount{}
		f.byToken[token] = tc
	}
	if token < f.highest {
		f.refused++
		tc.Refused++
		return false
	}
	f.highest = token
	f.accepted++
	tc.Accepted++
	return true
}

// Refused is the number of writes refused for a stale token.
func (f *Fence) Refused() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused
}

// Accepted is the number of writes accepted.
func (f *Fence) Accepted() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.accepted
}

// Token returns what the fence did with token's writes so far.
func (f *Fence) Token(token int64) TokenCount {
	f.mu.Lock()
	defer f.mu.Unlock()
	if tc := f.byToken[token]; tc != nil {
		return *tc
	}
	return TokenCount{}
}

// Serve serves the fence on a free port of 127.0.0.1 until stop is called:
// one write per line, "TOKEN\n", answered "ok\n" or "refused\n". Each
// write is also recorded in h (when not nil) as a Write of client, timed
// by the fence itself.
func (f *Fence) Serve(h *History, client int) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[conn] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				f.serveConn(conn, h, client)
			}()
		}
	}()
	stop = func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}
	return ln.Addr().String(), stop, nil
}

func (f *Fence) serveConn(conn net.Conn, h *History, client int) {
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		token, err := strconv.ParseInt(strings.TrimSpace(sc.Text()), 10, 64)
		if err != nil {
			fmt.Fprintf(conn, "error %v\n", err)
			continue
		}
		var call *Call
		if h != nil {
			call = h.Invoke(client, LockInput{Op: Write, Token: token})
		}
		ok := f.Write(token)
		if call != nil {
			call.Return(LockOutput{OK: ok})
		}
		answer := "refused\n"
		if ok {
			answer = "ok\n"
		}
		if _, err := conn.Write([]byte(answer)); err != nil {
			return
		}
	}
}

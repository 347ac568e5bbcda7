package cache

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/jute"
)

// wire is one connection of the cache's own session. Requests go out
// through an unbounded queue that a writer goroutine drains, so that
// nothing that queues a request ever waits for the network; frames are
// read by the engine's goroutine, which never waits for anything else, so
// the socket is always drained.
type wire struct {
	nc      net.Conn
	in      *bufio.Reader
	maxLen  int
	timeout time.Duration // the negotiated session timeout
	sess    *session

	mu    sync.Mutex
	xid   int32
	queue [][]byte
	wake  chan struct{}
	done  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
}

// session is the cache's session: kept across connections, replaced when
// the server has expired it.
type session struct {
	id       int64
	passwd   []byte
	lastZxid int64
}

// errExpired reports that the server no longer knows the session.
var errExpired = errors.New("session expired")

// dial opens a connection to one of the servers (tried in turn, from
// next), resumes sess (or opens a new session if sess.id is 0) and sends
// the client's credentials. It returns the connection and the index of
// the server it reached.
func dial(ctx context.Context, c *client.Client, w client.Wire, next int, sess *session) (*wire, int, error) {
	var last error
	for i := range w.Servers {
		k := (next + i) % len(w.Servers)
		conn, err := connectTo(ctx, c, w, w.Servers[k], sess)
		if err == nil || errors.Is(err, errExpired) || ctx.Err() != nil {
			return conn, k, err
		}
		last = err
	}
	return nil, next, last
}

func connectTo(ctx context.Context, c *client.Client, w client.Wire, addr string, sess *session) (*wire, error) {
	nc, err := c.DialWire(ctx, addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	wait := max(time.Second, w.SessionTimeout/3)
	nc.SetDeadline(time.Now().Add(wait))
	passwd := sess.passwd
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	// ReadOnly is false: a server in read-only mode (cut off from its
	// quorum, its data possibly old) refuses the cache, which stays stale
	// rather than serve old data as current.
	req := &jute.ConnectRequest{LastZxidSeen: sess.lastZxid, TimeOut: int32(w.SessionTimeout / time.Millisecond),
		SessionID: sess.id, Passwd: passwd, HasReadOnly: true}
	maxLen := 2*max(w.MaxBuffer, jute.DefaultMaxBuffer) + 64<<10
	wc := &wire{nc: nc, in: bufio.NewReaderSize(nc, 32<<10), maxLen: maxLen, sess: sess,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	if _, err := nc.Write(jute.Frame(req)); err != nil {
		nc.Close()
		return nil, err
	}
	b, err := wc.readFrame()
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	var rsp jute.ConnectResponse
	if err := jute.Decode(b, &rsp); err != nil {
		nc.Close()
		return nil, err
	}
	if rsp.SessionID == 0 || rsp.TimeOut <= 0 {
		nc.Close()
		return nil, errExpired
	}
	sess.id, sess.passwd = rsp.SessionID, rsp.Passwd
	wc.timeout = time.Duration(rsp.TimeOut) * time.Millisecond
	nc.SetDeadline(time.Time{})
	for _, a := range w.Auth {
		if _, err := nc.Write(jute.Frame(&jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth},
			&jute.AuthPacket{Scheme: a.Scheme, Auth: a.Auth})); err != nil {
			nc.Close()
			return nil, err
		}
	}
	wc.wg.Add(1)
	go wc.writeLoop()
	return wc, nil
}

// send queues a request and returns its xid.
func (w *wire) send(op int32, req any) int32 {
	w.mu.Lock()
	w.xid++
	xid := w.xid
	w.queue = append(w.queue, jute.Frame(&jute.RequestHeader{Xid: xid, Type: op}, req))
	w.mu.Unlock()
	w.signal()
	return xid
}

func (w *wire) ping() {
	w.mu.Lock()
	w.queue = append(w.queue, jute.Frame(&jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing}))
	w.mu.Unlock()
	w.signal()
}

func (w *wire) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes what is queued and pings every third of the session
// timeout.
func (w *wire) writeLoop() {
	defer w.wg.Done()
	tick := time.NewTicker(w.timeout / 3)
	defer tick.Stop()
	var buf []byte
	for {
		select {
		case <-w.done:
			return
		case <-tick.C:
			w.ping()
			continue
		case <-w.wake:
		}
		w.mu.Lock()
		batch := w.queue
		w.queue = nil
		w.mu.Unlock()
		buf = buf[:0]
		for _, b := range batch {
			buf = append(buf, b...)
		}
		w.nc.SetWriteDeadline(time.Now().Add(w.timeout))
		if _, err := w.nc.Write(buf); err != nil {
			w.close()
			return
		}
		if cap(buf) > 1<<20 {
			buf = nil
		}
	}
}

// readFrame reads one frame; it fails when nothing came for two thirds of
// the session timeout (a ping is answered well within that).
func (w *wire) readFrame() ([]byte, error) {
	if w.timeout > 0 {
		w.nc.SetReadDeadline(time.Now().Add(2 * w.timeout / 3))
	}
	var l [4]byte
	if _, err := io.ReadFull(w.in, l[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(l[:]))
	if n < 0 {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	if int(n) > w.maxLen {
		// The reply header's xid says what the reply answers.
		if _, err := io.ReadFull(w.in, l[:]); err != nil {
			return nil, err
		}
		return nil, &frameTooLarge{size: int(n), max: w.maxLen, xid: int32(binary.BigEndian.Uint32(l[:]))}
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(w.in, b); err != nil {
		return nil, err
	}
	return b, nil
}

// frameTooLarge reports a frame longer than the connection reads; the
// connection cannot go on.
type frameTooLarge struct {
	size, max int
	xid       int32
}

func (e *frameTooLarge) Error() string {
	return fmt.Sprintf("frame of %d bytes (limit %d), xid %d", e.size, e.max, e.xid)
}

// close ends the connection; the session lives on.
func (w *wire) close() {
	w.once.Do(func() {
		close(w.done)
		w.nc.Close()
	})
}

// closeSession ends the session, as well as it can in a second: it asks
// the server to close it, and waits until the server has closed the
// connection (closing first could reset the connection before the server
// read the request).
func (w *wire) closeSession() {
	w.mu.Lock()
	w.xid++
	xid := w.xid
	w.mu.Unlock()
	w.nc.SetDeadline(time.Now().Add(time.Second))
	if _, err := w.nc.Write(jute.Frame(&jute.RequestHeader{Xid: xid, Type: jute.OpCloseSession})); err == nil {
		io.Copy(io.Discard, w.nc)
	}
	w.close()
	w.wg.Wait()
}

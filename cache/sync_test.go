package cache_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// gate is a relay between clients and one server that can hold back the
// server's frames: while closed, it keeps them (in order) and reports each
// reply to a call (an xid of 0 or more) on replies; open forwards them.
type gate struct {
	target  string
	mu      sync.Mutex
	closed  bool
	held    []heldFrame
	replies chan struct{}
}

type heldFrame struct {
	c net.Conn
	b []byte
}

func newGate(target string) *gate {
	return &gate{target: target, replies: make(chan struct{}, 64)}
}

func (g *gate) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	return relay(g.target, timeout, func(end net.Conn, first bool, b []byte) []byte {
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.closed || first {
			return b
		}
		g.held = append(g.held, heldFrame{end, b})
		if len(b) >= 8 && int32(binary.BigEndian.Uint32(b[4:8])) >= 0 {
			select {
			case g.replies <- struct{}{}:
			default:
			}
		}
		return nil
	})
}

func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// open forwards what was held and lets everything through again. (A frame
// read meanwhile waits for the lock, so the order is kept.)
func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, f := range g.held {
		f.c.Write(f.b)
	}
	g.held, g.closed = nil, false
}

// A WaitFor that comes while the cache's sync for an earlier WaitFor is
// under way must not be answered by that sync alone: the server may have
// processed it before the write whose zxid the later WaitFor passes (here a
// write outside the cached subtree, which no watch event reports). It is
// answered within a round trip, not at the cache's next ping.
func TestWaitForDuringAnotherSync(t *testing.T) {
	eachMode(t, func(t *testing.T, b zktest.Backend, opts ...cache.Option) {
		ctx := recipetest.Context(t)
		w := b.Connect(t)
		r := dir(t, w)
		outside := dir(t, w)
		g := newGate(b.Addr())
		// A long session timeout: the cache's pings (every third of it)
		// would also bring its snapshot up to date.
		cl := b.Connect(t, client.WithDialer(g.dial), client.WithSessionTimeout(zktest.Scale(30*time.Second)))
		cc, err := cache.OpenTree(ctx, cl, r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		defer g.open() // before Close, whatever happens

		g.close()
		actx, cancel := context.WithCancel(ctx)
		defer cancel()
		go cc.WaitFor(actx, 1<<62) // asks for a sync
		select {
		case <-g.replies: // the server has answered the sync, before the write below
		case <-time.After(zktest.Scale(10 * time.Second)):
			g.open()
			t.Fatal("the cache sent no sync")
		}
		st, err := w.Set(ctx, outside, []byte("x"), -1)
		if err != nil {
			g.open()
			t.Fatal(err)
		}
		res := make(chan error, 1)
		bctx, cancelB := context.WithTimeout(ctx, zktest.Scale(3*time.Second))
		defer cancelB()
		go func() {
			s, err := cc.WaitFor(bctx, st.Mzxid)
			if err == nil && s.Zxid() < st.Mzxid {
				t.Errorf("snapshot at %#x for a WaitFor of %#x", s.Zxid(), st.Mzxid)
			}
			res <- err
		}()
		// Both WaitFors are parked (the second past its request for a
		// sync) before the server's frames go through.
		recipetest.Eventually(t, "the second WaitFor waits", func() bool {
			return cache.Wanted(cc) >= st.Mzxid && parkedInWaitFor() == 2
		})
		g.open()
		if err := <-res; err != nil {
			t.Fatalf("WaitFor(%#x) of a write made while the cache's sync was under way: %v", st.Mzxid, err)
		}
	})
}

// parkedInWaitFor counts the goroutines blocked in Cache.WaitFor's select.
func parkedInWaitFor() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("[select")) && bytes.Contains(g, []byte("cache.(*Cache).WaitFor(")) {
			n++
		}
	}
	return n
}

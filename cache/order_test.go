package cache_test

import (
	"encoding/binary"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/jute"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// A node created under an existing directory after the persistent watch
// is armed but before the load has read the root: its creation event comes
// first, and the read of its parent that the event calls for must not
// stand in for the parent's listing (the cache once held the directory
// without its children, for good).
func TestCreateBetweenWatchAndLoad(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		w := b.Connect(t)
		r := dir(t, w)
		mustCreate(t, w, r+"/x", r+"/x/old")
		var zxid atomic.Int64
		between := func() { // on the cache's writer goroutine: no t.Fatal
			if _, err := w.Create(recipetest.Context(t), r+"/x/y", nil, client.Persistent); err != nil {
				t.Error(err)
			}
			if _, st, err := w.Exists(recipetest.Context(t), r+"/x/y"); err == nil {
				zxid.Store(st.Czxid)
			}
		}
		cl := b.Connect(t, client.WithDialer(interleave(t, between)))
		cc, err := cache.OpenTree(recipetest.Context(t), cl, r)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		if zxid.Load() == 0 {
			t.Fatal("the cache's load did not go through the interleaving connection")
		}
		s := waitFor(t, cc, zxid.Load())
		if got, want := rel(r, s.Paths()), []string{"", "/x", "/x/old", "/x/y"}; !slices.Equal(got, want) {
			t.Fatalf("the cache holds %v, the tree %v", got, want)
		}
	})
}

// interleave returns a dialer whose first connection to send an addWatch
// sends it alone, waits for its reply, runs between, and only then sends
// what it queued after it.
func interleave(t *testing.T, between func()) client.Dialer {
	var once atomic.Bool
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		nc, err := (&net.Dialer{Timeout: timeout}).Dial(network, address)
		if err != nil {
			return nil, err
		}
		return &interleaved{Conn: nc, t: t, once: &once, between: between, answered: make(chan struct{})}, nil
	}
}

// interleaved reads the frames each way: the first is the handshake, the
// others start with a request header (xid, type) or a reply header (xid).
type interleaved struct {
	net.Conn
	t        *testing.T
	once     *atomic.Bool
	between  func()
	wrote    bool
	watchXid atomic.Int32
	answered chan struct{}

	mu   sync.Mutex
	in   []byte
	read bool
}

func (c *interleaved) Write(b []byte) (int, error) {
	if !c.wrote {
		c.wrote = true
		return c.Conn.Write(b)
	}
	for off := 0; off+12 <= len(b); {
		end := off + 4 + int(binary.BigEndian.Uint32(b[off:]))
		if int32(binary.BigEndian.Uint32(b[off+8:])) != jute.OpAddWatch || !c.once.CompareAndSwap(false, true) {
			off = end
			continue
		}
		c.watchXid.Store(int32(binary.BigEndian.Uint32(b[off+4:])))
		if _, err := c.Conn.Write(b[:end]); err != nil {
			return 0, err
		}
		select {
		case <-c.answered:
		case <-time.After(30 * time.Second):
			c.t.Error("no reply to the addWatch in 30 s")
		}
		c.between()
		n, err := c.Conn.Write(b[end:])
		return end + n, err
	}
	return c.Conn.Write(b)
}

func (c *interleaved) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.in = append(c.in, b[:n]...)
	for len(c.in) >= 4 {
		end := 4 + int(binary.BigEndian.Uint32(c.in))
		if len(c.in) < end {
			break
		}
		if c.read && end >= 8 && int32(binary.BigEndian.Uint32(c.in[4:])) == c.watchXid.Load() && c.watchXid.Load() != 0 {
			close(c.answered)
		}
		c.read = true
		c.in = c.in[end:]
	}
	return n, err
}

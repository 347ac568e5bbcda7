package cache_test

import (
	"encoding/binary"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// Cut off from the server, the cache serves its last snapshot and says it
// is stale; back, it reads the tree again and reports what changed
// meanwhile.
func TestStale(t *testing.T) {
	eachMode(t, func(t *testing.T, b zktest.Backend, opts ...cache.Option) {
		ctx := recipetest.Context(t)
		w := b.Connect(t)
		r := dir(t, w)
		mustCreate(t, w, r+"/a", r+"/b")
		proxied, cut, heal := b.Blackhole(t)
		cl := b.Connect(t, append(proxied, client.WithSessionTimeout(zktest.Scale(3*time.Second)))...)
		cc, err := cache.OpenTree(ctx, cl, r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		seen := follow(t, cc)

		cut()
		recipetest.Eventually(t, "the cache is stale", func() bool {
			stale, since := cc.Stale()
			return stale && !since.IsZero()
		})
		before := cc.Snapshot()
		zxid := mustCreate(t, w, r+"/c")
		if err := w.Delete(ctx, r+"/a", -1); err != nil {
			t.Fatal(err)
		}
		if cc.Snapshot() != before {
			t.Fatal("a stale cache took a snapshot")
		}
		heal()
		s := waitFor(t, cc, zxid)
		if got := rel(r, s.Paths()); !slices.Equal(got, []string{"", "/b", "/c"}) && !slices.Equal(got, []string{"", "/a", "/b", "/c"}) {
			t.Fatalf("after the partition: %v", got)
		}
		_, st, err := w.Exists(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		s = waitFor(t, cc, st.Pzxid)
		if got := rel(r, s.Paths()); !slices.Equal(got, []string{"", "/b", "/c"}) {
			t.Fatalf("after the partition: %v", got)
		}
		if stale, _ := cc.Stale(); stale {
			t.Fatal("still stale with a new snapshot")
		}
		seen.converges(t, s)
	})
}

// A server cut off from its quorum that goes on serving reads (ZooKeeper's
// read-only mode, readonlymode.enabled) holds data that may be old, and
// does not say so to the client it serves: the cache's client does not
// connect to such a server (its ConnectRequest does not accept a read-only
// one, which refuses it), so the cache stays stale on its last snapshot
// until its client reaches a server of the quorum. The servers have local
// sessions, without which a read-only server takes no client at all. Real
// ZooKeeper only: the reference server has no read-only mode.
func TestReadOnlyServerLeavesCacheStale(t *testing.T) {
	z := zktest.StartEnsemble(t, 3, zktest.WithJVMArgs("-Dreadonlymode.enabled=true"),
		zktest.WithConfig("localSessionsEnabled", "true"))
	ctx := recipetest.Context(t)
	leader, err := z.Leader()
	if err != nil {
		t.Fatal(err)
	}
	i := (leader + 1) % 3
	cut := z.Servers()[i]
	w := zktest.Backend{Name: "zookeeper", Servers: slices.DeleteFunc(z.Servers(), func(s string) bool { return s == cut })}.Connect(t)
	r := dir(t, w)
	mustCreate(t, w, r+"/a")

	var attempts atomic.Int32 // the client's connection attempts
	spy := func(network, address string, timeout time.Duration) (net.Conn, error) {
		nc, err := net.DialTimeout(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return &connectSpy{Conn: nc, seen: func(int64, int64) { attempts.Add(1) }}, nil
	}
	one := zktest.Backend{Name: "zookeeper", Servers: []string{cut}}
	cc, err := cache.OpenTree(ctx, one.Connect(t, client.WithDialer(spy)), r)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()

	z.Isolate(i)
	recipetest.Eventually(t, "the cache is stale", func() bool {
		stale, _ := cc.Stale()
		return stale
	})
	recipetest.Eventually(t, "the cut server serves read-only", func() bool {
		out, err := zktest.FourLetterWord(ctx, cut, "isro")
		return err == nil && strings.TrimSpace(out) == "ro"
	})
	st, err := w.Set(ctx, r+"/a", []byte("v2"), -1)
	if err != nil {
		t.Fatal(err)
	}
	// Three attempts: a read-only server that took the client would answer
	// the first that its session expired and take the second.
	from := attempts.Load()
	recipetest.Eventually(t, "the client tries the read-only server three times, or the cache reads from it", func() bool {
		stale, _ := cc.Stale()
		return !stale || attempts.Load() >= from+3
	})
	if stale, _ := cc.Stale(); !stale {
		n, _ := cc.Snapshot().Get(r + "/a")
		t.Fatalf("the cache is not stale, on a read-only server's snapshot (%q)", n.Data)
	}

	z.Heal()
	if n, _ := waitFor(t, cc, st.Mzxid).Get(r + "/a"); string(n.Data) != "v2" {
		t.Fatalf("after the partition: %q", n.Data)
	}
	if stale, _ := cc.Stale(); stale {
		t.Fatal("still stale with a new snapshot")
	}
}

// After its session expired, the cache reads the tree again under a new
// one and says so with a reset event, then goes on following.
func TestSessionExpiry(t *testing.T) {
	eachMode(t, func(t *testing.T, b zktest.Backend, opts ...cache.Option) {
		ctx := recipetest.Context(t)
		w := b.Connect(t)
		r := dir(t, w)
		mustCreate(t, w, r+"/a")
		cc, err := cache.OpenTree(ctx, b.Connect(t), r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		var mu sync.Mutex
		var types []cache.EventType
		go func() {
			for ev := range cc.Events() {
				mu.Lock()
				types = append(types, ev.Type)
				mu.Unlock()
			}
		}()
		recipetest.Eventually(t, "the first snapshot reported", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return slices.Contains(types, cache.Initialized)
		})
		id := expireCache(t, b, cc)
		recipetest.Eventually(t, "a reset event", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return slices.Contains(types, cache.Reset)
		})
		if got, _ := cache.SessionOf(cc); got == id {
			t.Fatal("the cache kept its expired session")
		}
		zxid := mustCreate(t, w, r+"/b")
		if s := waitFor(t, cc, zxid); s.Len() != 3 {
			t.Fatalf("after the reset: %v", s.Paths())
		}
		mu.Lock()
		defer mu.Unlock()
		want := []cache.EventType{cache.Created, cache.Created, cache.Initialized, cache.Reset}
		if len(types) < len(want) || !slices.Equal(types[:len(want)], want) {
			t.Fatalf("events %v, want %v first", types, want)
		}
	})
}

// The changes made while the cache's session was expiring come after the
// reset event, and the zxids of the events never go back: the reset does
// not claim the snapshot it announces (whose differences are still to
// come), so a receiver that skips events at or below the last zxid it
// has seen (but those without one, deletes whose zxid is unknown) misses
// none of them.
func TestResetKeepsZxidOrder(t *testing.T) {
	eachMode(t, func(t *testing.T, b zktest.Backend, opts ...cache.Option) {
		ctx := recipetest.Context(t)
		w := b.Connect(t)
		r := dir(t, w)
		mustCreate(t, w, r+"/a", r+"/b")
		proxied, cut, heal := b.Blackhole(t)
		cc, err := cache.OpenTree(ctx, b.Connect(t, proxied...), r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		seen := follow(t, cc)
		seen.converges(t, cc.Snapshot())

		cut()
		expireCache(t, b, cc)
		// Changes the cache can only learn of under its next session.
		if _, err := w.Set(ctx, r+"/a", []byte("v2"), -1); err != nil {
			t.Fatal(err)
		}
		if err := w.Delete(ctx, r+"/b", -1); err != nil {
			t.Fatal(err)
		}
		zxid := mustCreate(t, w, r+"/c")
		heal()
		s := waitFor(t, cc, zxid)
		if got := rel(r, s.Paths()); !slices.Equal(got, []string{"", "/a", "/c"}) {
			t.Fatalf("after the reset: %v", got)
		}
		seen.converges(t, s)
	})
}

// The session the cache opens after its last one expired tells the server
// the last zxid the cache has seen, as a resumed session does: a server
// behind the cache's snapshot (a lagging follower) must refuse it rather
// than serve an older tree, which the cache would then wait out, stale.
func TestNewSessionCarriesLastZxid(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		w := b.Connect(t)
		r := dir(t, w)
		zxid := mustCreate(t, w, r+"/a")
		var mu sync.Mutex
		var fresh []int64 // LastZxidSeen of each request for a new session
		dialer := func(network, address string, timeout time.Duration) (net.Conn, error) {
			nc, err := net.DialTimeout(network, address, timeout)
			if err != nil {
				return nil, err
			}
			return &connectSpy{Conn: nc, seen: func(session, lastZxid int64) {
				if session == 0 {
					mu.Lock()
					fresh = append(fresh, lastZxid)
					mu.Unlock()
				}
			}}, nil
		}
		cc, err := cache.OpenTree(ctx, b.Connect(t, client.WithDialer(dialer)), r)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		before := waitFor(t, cc, zxid).Zxid()
		mu.Lock()
		fresh = nil
		mu.Unlock()
		id := expireCache(t, b, cc)
		recipetest.Eventually(t, "a new session", func() bool {
			got, _ := cache.SessionOf(cc)
			return got != id && got != 0
		})
		mu.Lock()
		defer mu.Unlock()
		if len(fresh) == 0 {
			t.Fatal("no request for a new session went through the dialer")
		}
		for _, z := range fresh {
			if z < before {
				t.Fatalf("a new session asked for with last zxid %#x; the cache had seen %#x", z, before)
			}
		}
	})
}

// connectSpy reports the session id and last zxid of the ConnectRequest
// that opens its connection.
type connectSpy struct {
	net.Conn
	seen  func(session, lastZxid int64)
	wrote bool
}

func (c *connectSpy) Write(b []byte) (int, error) {
	// length, protocolVersion, lastZxidSeen, timeOut, sessionId
	if !c.wrote && len(b) >= 4+4+8+4+8 {
		c.wrote = true
		c.seen(int64(binary.BigEndian.Uint64(b[20:28])), int64(binary.BigEndian.Uint64(b[8:16])))
	}
	return c.Conn.Write(b)
}

// A reply that says the session expired, moved or is unknown (as
// ZooKeeper answers a request of a session closed or moved while the
// request was under way), or that the server shed the request, is cured
// by reading again: the cache reads the tree again and goes on, rather
// than stopping as it does for an error no retry cures.
func TestSessionErrorReplyReconnects(t *testing.T) {
	for _, tc := range []struct {
		name string
		code int32
	}{
		{"SessionExpired", -112},
		{"SessionMoved", -118},
		{"UnknownSession", -12},
		{"Throttled", -127},
	} {
		t.Run(tc.name, func(t *testing.T) {
			zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
				ctx := recipetest.Context(t)
				w, r, _, cc := faultedCache(t, b, func(f *replyFault) { f.arm(tc.code) })
				st, err := w.Set(ctx, r+"/a", []byte("v3"), -1)
				if err != nil {
					t.Fatal(err)
				}
				s := waitFor(t, cc, st.Mzxid)
				if n, ok := s.Get(r + "/a"); !ok || string(n.Data) != "v3" {
					t.Fatalf("after the error: %v", n)
				}
				if err := cc.Err(); err != nil {
					t.Fatalf("the cache stopped: %v", err)
				}
			})
		})
	}
}

// faultedCache opens a tree cache of a new directory holding the node a,
// through a replyFault, arms the fault and writes a so that the cache reads
// it, and returns once the fault has replaced a reply. w is the writing
// client; the cache is closed with the test.
func faultedCache(t *testing.T, b zktest.Backend, arm func(*replyFault)) (w *client.Client, r string, f *replyFault, cc *cache.Cache) {
	t.Helper()
	ctx := recipetest.Context(t)
	w = b.Connect(t)
	r = dir(t, w)
	mustCreate(t, w, r+"/a")
	f = newReplyFault(b.Addr())
	cc, err := cache.OpenTree(ctx, b.Connect(t, client.WithDialer(f.dial)), r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Close)
	arm(f)
	if _, err := w.Set(ctx, r+"/a", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	recipetest.Within(t, f.hit, "the cache's read answered with the error")
	return w, r, f, cc
}

// replyFault is a relay between clients and one server that, once armed,
// replaces the server's next reply to a request with an error reply of
// the same xid and zxid.
type replyFault struct {
	target string
	code   atomic.Int32 // 0: not armed
	always atomic.Bool  // every reply to a request, not the next one only
	hit    chan struct{}
	once   sync.Once
	// replaced counts the replies replaced: with armAlways, one a load
	// (its first read, of the root, fails).
	replaced atomic.Int32
}

func newReplyFault(target string) *replyFault {
	return &replyFault{target: target, hit: make(chan struct{})}
}

func (f *replyFault) arm(code int32) { f.code.Store(code) }

// armAlways replaces every reply to a request from now on.
func (f *replyFault) armAlways(code int32) {
	f.always.Store(true)
	f.code.Store(code)
}

func (f *replyFault) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	return relay(f.target, timeout, func(_ net.Conn, first bool, b []byte) []byte {
		// After the handshake: xid, zxid, err, then the body. A request's
		// xid is not negative.
		if first || len(b) < 20 || int32(binary.BigEndian.Uint32(b[4:8])) < 0 {
			return b
		}
		code := f.code.Load()
		if !f.always.Load() {
			code = f.code.Swap(0)
		}
		if code != 0 {
			f.replaced.Add(1)
			b = b[:20]
			binary.BigEndian.PutUint32(b, 16)
			binary.BigEndian.PutUint32(b[16:], uint32(code))
			f.once.Do(func() { close(f.hit) })
		}
		return b
	})
}

// A load that fails before it served a snapshot (here: every read
// answered "throttled") does not reset the delay between attempts: the
// cache backs off, doubling the delay, rather than read the tree again
// every 10 ms.
func TestFailingLoadBacksOff(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		w, r, f, cc := faultedCache(t, b, func(f *replyFault) { f.armAlways(-127) }) // ThrottledOp
		start, from := time.Now(), f.replaced.Load()
		recipetest.Eventually(t, "six more loads", func() bool { return f.replaced.Load() >= from+6 })
		// Backing off from 10 ms, doubling each time, with 25% jitter:
		// at least 0.75 * (10+20+40+80+160) ms before the sixth attempt.
		if took := time.Since(start); took < 230*time.Millisecond {
			t.Fatalf("six loads in %v: no backoff", took)
		}
		f.always.Store(false)
		f.code.Store(0)
		st, err := w.Set(ctx, r+"/a", []byte("v3"), -1)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := waitFor(t, cc, st.Mzxid).Get(r + "/a"); string(n.Data) != "v3" {
			t.Fatalf("after the fault: %q", n.Data)
		}
	})
}

// expireCache has the server expire the cache's session, and returns its id.
func expireCache(t *testing.T, b zktest.Backend, cc *cache.Cache) int64 {
	t.Helper()
	id, passwd := cache.SessionOf(cc)
	if ref := b.Reference(); ref != nil {
		if !ref.ExpireSession(id) {
			t.Fatal("the cache's session was not alive")
		}
	} else if err := zktest.ExpireSession(recipetest.Context(t), b.Addr(), id, passwd); err != nil {
		t.Fatal(err)
	}
	return id
}

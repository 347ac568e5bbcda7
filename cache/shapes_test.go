package cache_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// eachMode runs fn on both servers with a persistent watch and with
// one-shot watches.
func eachMode(t *testing.T, fn func(t *testing.T, b zktest.Backend, opts ...cache.Option)) {
	t.Run("persistent", func(t *testing.T) {
		zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) { fn(t, b) })
	})
	t.Run("oneshot", func(t *testing.T) {
		zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) { fn(t, b, cache.WithOneShotWatches()) })
	})
}

// dir makes a fresh directory for the test.
func dir(t *testing.T, c *client.Client) string {
	t.Helper()
	p := zktest.UniquePath(t)
	if err := c.EnsurePath(recipetest.Context(t), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustCreate(t *testing.T, c *client.Client, paths ...string) int64 {
	t.Helper()
	var zxid int64
	for _, p := range paths {
		if _, err := c.Create(recipetest.Context(t), p, []byte(p), client.Persistent); err != nil {
			t.Fatal(err)
		}
		_, st, err := c.Exists(recipetest.Context(t), p)
		if err != nil {
			t.Fatal(err)
		}
		zxid = st.Czxid
	}
	return zxid
}

func waitFor(t *testing.T, c *cache.Cache, zxid int64) *cache.Snapshot {
	t.Helper()
	s, err := c.WaitFor(recipetest.Context(t), zxid)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rel(root string, paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, p[len(root):])
	}
	return out
}

// The three shapes hold the root and as many levels as they say, and a
// Stat that follows changes below them.
func TestShapes(t *testing.T) {
	eachMode(t, func(t *testing.T, b zktest.Backend, opts ...cache.Option) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		r := dir(t, c)
		mustCreate(t, c, r+"/a", r+"/a/x", r+"/a/x/deep", r+"/b")
		node, err := cache.OpenNode(ctx, c, r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer node.Close()
		kids, err := cache.OpenChildren(ctx, c, r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer kids.Close()
		two, err := cache.OpenTree(ctx, c, r, append(opts, cache.WithDepth(2))...)
		if err != nil {
			t.Fatal(err)
		}
		defer two.Close()
		all, err := cache.OpenTree(ctx, c, r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer all.Close()

		want := map[*cache.Cache][]string{
			node: {""},
			kids: {"", "/a", "/b"},
			two:  {"", "/a", "/a/x", "/b"},
			all:  {"", "/a", "/a/x", "/a/x/deep", "/b"},
		}
		for cc, paths := range want {
			if got := rel(r, cc.Snapshot().Paths()); !slices.Equal(got, paths) {
				t.Errorf("paths %v, want %v", got, paths)
			}
		}
		if n, _ := node.Snapshot().Get(r); n.Children != nil || n.Stat.NumChildren != 2 {
			t.Errorf("node cache: children %v, numChildren %d", n.Children, n.Stat.NumChildren)
		}
		if n, _ := kids.Snapshot().Get(r); !slices.Equal(n.Children, []string{"a", "b"}) {
			t.Errorf("children cache: root's children %v", n.Children)
		}

		// A change below each depth limit shows in the Stat of the node
		// at the limit.
		zxid := mustCreate(t, c, r+"/c", r+"/a/y", r+"/a/x/deep2")
		for cc := range want {
			s := waitFor(t, cc, zxid)
			n, _ := s.Get(r)
			if n.Stat.NumChildren != 3 {
				t.Errorf("root numChildren %d, want 3", n.Stat.NumChildren)
			}
			if x, ok := s.Get(r + "/a/x"); ok && x.Stat.NumChildren != 2 {
				t.Errorf("%s numChildren %d, want 2", x.Path, x.Stat.NumChildren)
			}
		}
		if got := all.Snapshot().Len(); got != 8 {
			t.Errorf("tree cache: %d nodes, want 8", got)
		}
	})
}

// A node cache (WithDepth(0)) watches its node alone: the server sends it
// nothing for changes of its children's data, however many, and tells it
// of the node's own changes, children's comings and goings included (its
// Stat), and of its deletion and creation.
func TestNodeCacheWatchesNodeAlone(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t) // writes; the cache's client only reads
		r := dir(t, c) + "/node"
		cc, err := cache.OpenNode(ctx, b.Connect(t), r)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		if !cc.PersistentWatch() {
			t.Fatal("a node cache on one-shot watches")
		}
		mustCreate(t, c, r, r+"/a")
		id, _ := cache.SessionOf(cc)
		before := sentTo(t, b.Addr(), id)
		const writes = 40
		for i := range writes {
			if _, err := c.Set(ctx, r+"/a", fmt.Appendf(nil, "v%d", i), -1); err != nil {
				t.Fatal(err)
			}
		}
		zxid := mustCreate(t, c, r+"/b")
		n, ok := waitFor(t, cc, zxid).Get(r)
		if !ok || n.Stat.NumChildren != 2 || n.Children != nil {
			t.Fatalf("node after a child's creation: %+v", n)
		}
		// The server's count includes the event and the read of r/b's
		// creation, a sync and pings.
		if sent := sentTo(t, b.Addr(), id) - before; sent >= writes/2 {
			t.Fatalf("the server sent the node cache %d packets for %d writes of a child", sent, writes)
		}
		if err := c.Delete(ctx, r+"/a", -1); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, r+"/b", -1); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, r, -1); err != nil {
			t.Fatal(err)
		}
		_, st, err := c.Exists(ctx, parentPath(r))
		if err != nil {
			t.Fatal(err)
		}
		if s := waitFor(t, cc, st.Pzxid); s.Len() != 0 {
			t.Fatalf("%v after the node's deletion", s.Paths())
		}
		if s := waitFor(t, cc, mustCreate(t, c, r)); s.Len() != 1 {
			t.Fatalf("%v after the node's creation", s.Paths())
		}
	})
}

// sentTo returns how many packets the server at addr has sent to session's
// connection, as its four-letter word "cons" says (real ZooKeeper and the
// reference server alike).
func sentTo(t *testing.T, addr string, session int64) int {
	t.Helper()
	out, err := zktest.FourLetterWord(recipetest.Context(t), addr, "cons")
	if err != nil {
		t.Fatal(err)
	}
	sid := fmt.Sprintf(",sid=0x%x,", session)
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, sid) {
			continue
		}
		_, rest, _ := strings.Cut(line, ",sent=")
		n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		if err != nil {
			t.Fatalf("cons: %q: %v", line, err)
		}
		return n
	}
	t.Fatalf("cons lists no connection of session 0x%x:\n%s", session, out)
	return 0
}

func parentPath(p string) string { return p[:strings.LastIndexByte(p, '/')] }

// A cache of a node that does not exist holds nothing, then follows the
// node as it is created, deleted and created again.
func TestMissingRoot(t *testing.T) {
	eachMode(t, func(t *testing.T, b zktest.Backend, opts ...cache.Option) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := dir(t, c)
		r := base + "/root"
		cc, err := cache.OpenTree(ctx, c, r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		if n := cc.Snapshot().Len(); n != 0 {
			t.Fatalf("%d nodes before the root exists", n)
		}
		seen := follow(t, cc)
		for round := range 2 {
			zxid := mustCreate(t, c, r, r+"/k")
			if s := waitFor(t, cc, zxid); s.Len() != 2 {
				t.Fatalf("round %d: %v after creating the root", round, s.Paths())
			}
			if err := c.Delete(ctx, r+"/k", -1); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(ctx, r, -1); err != nil {
				t.Fatal(err)
			}
			_, st, err := c.Exists(ctx, base) // its pzxid is the delete's zxid
			if err != nil {
				t.Fatal(err)
			}
			if s := waitFor(t, cc, st.Pzxid); s.Len() != 0 {
				t.Fatalf("round %d: %v after deleting the root", round, s.Paths())
			}
		}
		seen.converges(t, cc.Snapshot())
	})
}

// The root's delete, by another client, shows in a snapshot at the
// delete's zxid or later, never at one the root still existed at: its
// event alone makes no parent read again, whose reply would bring the
// client's zxid up to the delete's.
func TestRootDeleteSnapshotZxid(t *testing.T) {
	eachMode(t, func(t *testing.T, b zktest.Backend, opts ...cache.Option) {
		ctx := recipetest.Context(t)
		w := b.Connect(t)
		r := dir(t, w) + "/root"
		mustCreate(t, w, r)
		cc, err := cache.OpenTree(ctx, b.Connect(t), r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		gone := make(chan *cache.Snapshot, 1)
		defer cache.OnPublish(r, func(s *cache.Snapshot) {
			if s.Len() == 0 {
				select {
				case gone <- s:
				default:
				}
			}
		})()
		if err := w.Delete(ctx, r, -1); err != nil {
			t.Fatal(err)
		}
		deleted := w.LastZxid() // the delete's
		select {
		case s := <-gone:
			if s.Zxid() < deleted {
				t.Fatalf("a snapshot at %#x without the root, deleted at %#x", s.Zxid(), deleted)
			}
		case <-time.After(zktest.Scale(20 * time.Second)):
			t.Fatal("no snapshot without the root")
		}
	})
}

// A tree larger than the limits stops the cache with a *LimitError: at
// Open, or when it grows.
func TestLimits(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		r := dir(t, c)
		mustCreate(t, c, r+"/a", r+"/b", r+"/c")
		var le *cache.LimitError
		if _, err := cache.OpenTree(ctx, c, r, cache.WithMaxNodes(3)); !errors.As(err, &le) || le.MaxNodes != 3 {
			t.Fatalf("open over the node limit: %v", err)
		}
		if _, err := cache.OpenTree(ctx, c, r, cache.WithMaxBytes(20)); !errors.As(err, &le) || le.MaxBytes != 20 {
			t.Fatalf("open over the byte limit: %v", err)
		}
		cc, err := cache.OpenTree(ctx, c, r, cache.WithMaxNodes(5))
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		zxid := mustCreate(t, c, r+"/d", r+"/e")
		if _, err := cc.WaitFor(ctx, zxid); !errors.As(err, &le) {
			t.Fatalf("WaitFor past the limit: %v", err)
		}
		recipetest.Within(t, cc.Done(), "the cache stops")
		if !errors.As(cc.Err(), &le) || le.Nodes != 6 || strings.Count(cc.Err().Error(), r) != 1 {
			t.Fatalf("Err: %v", cc.Err())
		}
		if cc.Snapshot().Len() > 5 {
			t.Fatalf("last snapshot %v", cc.Snapshot().Paths())
		}
		unwatched(t, b, c, r)
	})
}

// unwatched waits until the server keeps no watch on path for c's session:
// a stopped cache's watch is removed.
func unwatched(t *testing.T, b zktest.Backend, c *client.Client, path string) {
	t.Helper()
	recipetest.Eventually(t, "the stopped cache's watch removed", func() bool {
		paths, err := zktest.WatchedPaths(recipetest.Context(t), b.Addr(), c.Session().ID())
		if err != nil {
			t.Fatal(err)
		}
		return !paths[path]
	})
}

// A node with more children than one reply can carry (a listing larger
// than the client reads: WithMaxBuffer + 64 KiB) stops the cache with a
// *LimitError naming it, at Open and while the cache runs, instead of
// reading the tree again for ever. A node cache of that node, which never
// lists its children, follows it.
func TestListingTooLarge(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		r := dir(t, c)
		mustCreate(t, c, r+"/big", r+"/small")
		cc, err := cache.OpenTree(ctx, c, r)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		const limit = client.DefaultMaxBuffer + 64<<10 // the longest reply the client reads
		fillListing(t, c, r+"/big", limit)
		expireCache(t, b, cc) // the cache reads the tree again, and lists /big
		recipetest.Within(t, cc.Done(), "the cache stops")
		var le *cache.LimitError
		if !errors.As(cc.Err(), &le) || le.Unreadable != r+"/big" {
			t.Fatalf("Err after a reload past the listing limit: %v", cc.Err())
		}
		if _, err := c.WaitConnected(ctx); err != nil {
			t.Fatal(err)
		}
		unwatched(t, b, c, r)

		open, cancel := context.WithTimeout(ctx, zktest.Scale(10*time.Second))
		defer cancel()
		if _, err := cache.OpenChildren(open, c, r+"/big"); !errors.As(err, &le) || le.Unreadable != r+"/big" ||
			le.Reply <= le.MaxReply || le.MaxReply != limit {
			t.Fatalf("open with a listing too large: %v", err)
		}

		// A node cache reads the node's Stat, never its children.
		node, err := cache.OpenNode(ctx, c, r+"/big")
		if err != nil {
			t.Fatal(err)
		}
		defer node.Close()
		mustCreate(t, c, r+"/big/more")
		_, st, err := c.Exists(ctx, r+"/big")
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := waitFor(t, node, st.Pzxid).Get(r + "/big"); n.Stat != *st {
			t.Fatalf("node cache: %+v, want %+v", n.Stat, st)
		}
	})
}

// fillListing creates children of p until listing them takes more than
// size bytes.
func fillListing(t *testing.T, c *client.Client, p string, size int) {
	t.Helper()
	ctx := recipetest.Context(t)
	name := strings.Repeat("n", 1000)
	for i, listed := 0, 0; listed <= size; {
		var ops []client.Op
		for ; len(ops) < 500; i++ {
			ops = append(ops, client.CreateOp(fmt.Sprintf("%s/%s%05d", p, name, i), nil, client.Persistent))
			listed += 4 + len(name) + 5
		}
		if _, err := c.Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
	}
}

// Bad input is refused before anything is sent.
func TestInput(t *testing.T) {
	b := zktest.ReferenceBackend(t)
	c := b.Connect(t)
	ctx := recipetest.Context(t)
	for _, tc := range []struct {
		path string
		opts []cache.Option
	}{
		{"relative", nil},
		{"/trailing/", nil},
		{"/ok", []cache.Option{cache.WithDepth(-1)}},
		{"/ok", []cache.Option{cache.WithMaxNodes(0)}},
		{"/ok", []cache.Option{cache.WithMaxBytes(-1)}},
	} {
		if _, err := cache.OpenTree(ctx, c, tc.path, tc.opts...); !errors.Is(err, client.ErrInvalidInput) {
			t.Errorf("%s: %v, want an input error", tc.path, err)
		}
	}
}

// Inside a namespace, paths are the client's.
func TestNamespace(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		ns := zktest.UniquePath(t)
		c := b.Connect(t, client.WithNamespace(ns))
		zxid := mustCreate(t, c, "/app", "/app/x")
		cc, err := cache.OpenTree(ctx, c, "/app")
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		s := waitFor(t, cc, zxid)
		if got := s.Paths(); !slices.Equal(got, []string{"/app", "/app/x"}) {
			t.Fatalf("paths %v", got)
		}
		whole, err := cache.OpenTree(ctx, c, "/")
		if err != nil {
			t.Fatal(err)
		}
		defer whole.Close()
		if got := whole.Snapshot().Paths(); !slices.Equal(got, []string{"/", "/app", "/app/x"}) {
			t.Fatalf("paths of the namespace %v", got)
		}
	})
}

// Closing the client closes its caches.
func TestClientClosed(t *testing.T) {
	b := zktest.ReferenceBackend(t)
	c := b.Connect(t)
	cc, err := cache.OpenTree(recipetest.Context(t), c, "/")
	if err != nil {
		t.Fatal(err)
	}
	id, _ := cache.SessionOf(cc)
	c.Close()
	recipetest.Within(t, cc.Done(), "the cache stops")
	if slices.Contains(b.Reference().Sessions(), id) {
		t.Fatalf("the closed cache's session 0x%x lives on", id)
	}
	// Closed with its client, as ErrClosed says.
	if !errors.Is(cc.Err(), client.ErrClosed) || !errors.Is(cc.Err(), cache.ErrClosed) {
		t.Fatalf("Err: %v, want cache.ErrClosed and client.ErrClosed", cc.Err())
	}
	if _, err := cc.WaitFor(context.Background(), 1<<62); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("WaitFor: %v", err)
	}
}

// OpenNode and OpenChildren add their depth to the caller's options
// without writing into the caller's slice: two shapes opened at once with
// one slice of options (with room to spare, as append leaves it) each get
// their own depth, whichever applies its options first.
func TestShapesShareOptions(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) { shareOptions(t, b) })
}

func shareOptions(t *testing.T, b zktest.Backend) {
	ctx := recipetest.Context(t)
	c := b.Connect(t)
	r := dir(t, c)
	mustCreate(t, c, r+"/a")
	type shape struct {
		open func(context.Context, *client.Client, string, ...cache.Option) (*cache.Cache, error)
		want []string
	}
	node := shape{cache.OpenNode, []string{""}}
	kids := shape{cache.OpenChildren, []string{"", "/a"}}
	for _, order := range [][2]shape{{node, kids}, {kids, node}} {
		var calls atomic.Int32
		second := make(chan struct{})
		hook := cache.OptionHook(func() {
			if calls.Add(1) == 1 {
				<-second // the first Open waits here until the second applied its options
			} else {
				close(second)
			}
		})
		opts := make([]cache.Option, 1, 4)
		opts[0] = hook
		type opened struct {
			c   *cache.Cache
			err error
		}
		first := make(chan opened, 1)
		go func() {
			cc, err := order[0].open(ctx, c, r, opts...)
			first <- opened{cc, err}
		}()
		recipetest.Eventually(t, "the first Open applies its options", func() bool { return calls.Load() == 1 })
		cc, err := order[1].open(ctx, c, r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		f := <-first
		if f.err != nil {
			t.Fatal(f.err)
		}
		defer f.c.Close()
		if got := rel(r, f.c.Snapshot().Paths()); !slices.Equal(got, order[0].want) {
			t.Errorf("the first cache holds %v, want %v", got, order[0].want)
		}
		if got := rel(r, cc.Snapshot().Paths()); !slices.Equal(got, order[1].want) {
			t.Errorf("the second cache holds %v, want %v", got, order[1].want)
		}
	}
}

// Open on a closed client fails with ErrClosed and dials nothing.
func TestOpenOnClosedClient(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		var dials atomic.Int32
		dialer := func(network, address string, timeout time.Duration) (net.Conn, error) {
			dials.Add(1)
			return net.DialTimeout(network, address, timeout)
		}
		for range 30 {
			c := b.Connect(t, client.WithDialer(dialer))
			c.Close()
			before := dials.Load()
			_, err := cache.OpenTree(recipetest.Context(t), c, "/")
			if !errors.Is(err, cache.ErrClosed) || !errors.Is(err, client.ErrClosed) {
				t.Fatalf("Open on a closed client: %v", err)
			}
			if n := dials.Load() - before; n != 0 {
				t.Fatalf("Open on a closed client dialed %d times", n)
			}
		}
	})
}

// The nodes a listing shows are read together (a MultiRead); nodes whose
// data add up to more than one reply can carry are read in smaller
// batches, not refused.
func TestLoadLargeData(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		r := dir(t, c)
		data := make([]byte, 100<<10)
		for i := range 24 { // 2.4 MB: more than twice the longest reply the client reads
			if _, err := c.Create(ctx, fmt.Sprintf("%s/n%02d", r, i), data, client.Persistent); err != nil {
				t.Fatal(err)
			}
		}
		cc, err := cache.OpenTree(ctx, c, r)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		if n := cc.Snapshot().Len(); n != 25 {
			t.Fatalf("%d nodes, want 25", n)
		}
		if n, _ := cc.Snapshot().Get(r + "/n23"); len(n.Data) != len(data) {
			t.Fatalf("n23 holds %d bytes", len(n.Data))
		}
	})
}

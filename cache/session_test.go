package cache_test

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// A cache runs on its client's session: one client with three caches is
// one connection at the server (its four-letter word cons), one session,
// and one watch per cache.
func TestCachesShareTheClientsConnection(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		w := b.Connect(t)
		var dials atomic.Int32
		dialer := func(network, address string, timeout time.Duration) (net.Conn, error) {
			dials.Add(1)
			return net.DialTimeout(network, address, timeout)
		}
		c := b.Connect(t, client.WithDialer(dialer))
		var roots []string
		for i := range 3 {
			r := dir(t, w) + fmt.Sprintf("/t%d", i)
			mustCreate(t, w, r, r+"/a")
			cc, err := cache.OpenTree(ctx, c, r)
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			if id, _ := cache.SessionOf(cc); id != c.Session().ID() {
				t.Fatalf("a cache on session 0x%x, its client on 0x%x", id, c.Session().ID())
			}
			roots = append(roots, r)
		}
		if n := dials.Load(); n != 1 {
			t.Fatalf("%d connections dialed for a client and three caches", n)
		}
		out, err := zktest.FourLetterWord(ctx, b.Addr(), "cons")
		if err != nil {
			t.Fatal(err)
		}
		sid := fmt.Sprintf("sid=0x%x,", c.Session().ID())
		if n := strings.Count(out, sid); n != 1 {
			t.Fatalf("cons lists %d connections of the client's session, want 1:\n%s", n, out)
		}
		watched, err := zktest.WatchedPaths(ctx, b.Addr(), c.Session().ID())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range roots {
			if !watched[r] {
				t.Errorf("no watch on %s for the client's session: %v", r, watched)
			}
		}
		t.Logf("cons, the client's connection: %s", consLine(out, sid))
	})
}

func consLine(out, sid string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, sid) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// Read your writes across clients: a writer creates and deletes nodes,
// and a reader's cache, given the writer's LastZxid (which counts the
// zxids of creates and deletes, whose replies carry no Stat), shows each
// write at once.
func TestWaitForWritersLastZxid(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		w := b.Connect(t)
		r := dir(t, w)
		cc, err := cache.OpenTree(ctx, b.Connect(t), r)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		for i := range 30 {
			p := fmt.Sprintf("%s/n%d", r, i)
			if _, err := w.Create(ctx, p, nil, client.Persistent); err != nil {
				t.Fatal(err)
			}
			if _, ok := waitFor(t, cc, w.LastZxid()).Get(p); !ok {
				t.Fatalf("create %d: the snapshot at the writer's LastZxid does not show it", i)
			}
			if err := w.Delete(ctx, p, -1); err != nil {
				t.Fatal(err)
			}
			if s := waitFor(t, cc, w.LastZxid()); slices.Contains(s.Paths(), p) {
				t.Fatalf("delete %d: the snapshot at the writer's LastZxid still shows it", i)
			}
		}
	})
}

package cache_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/testing/recipetest"
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
		id, passwd := cache.SessionOf(cc)
		if ref := b.Reference(); ref != nil {
			if !ref.ExpireSession(id) {
				t.Fatal("the cache's session was not alive")
			}
		} else if err := zktest.ExpireSession(ctx, b.Addr(), id, passwd); err != nil {
			t.Fatal(err)
		}
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

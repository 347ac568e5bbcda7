package cache_test

import (
	"bytes"
	"testing"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// Curator's CuratorCache and zkit's cache follow one tree while a writer
// changes it: both end on the tree a fresh read finds.
func TestCuratorCacheInterop(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		tw := newTreeWriter(t, c, 2)
		root := tw.root
		curator := recipetest.StartCuratorCache(t, b.Servers, root)
		cc, err := cache.OpenTree(ctx, b.Connect(t), root)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		for range operations() / 2 {
			tw.step(ctx)
		}
		last, err := cc.WaitFor(ctx, tw.zxid)
		if err != nil {
			t.Fatal(err)
		}
		fresh := readTree(t, c, root)
		if err := sameTree(last, fresh); err != nil {
			t.Fatalf("zkit's cache against a fresh read: %v", err)
		}
		var got map[string][]byte
		recipetest.Eventually(t, "Curator's cache is the tree", func() bool {
			got = curator.Dump()
			if len(got) != len(fresh) {
				return false
			}
			for p, n := range fresh {
				if d, ok := got[p]; !ok || !bytes.Equal(d, n.data) {
					return false
				}
			}
			return true
		})
	})
}

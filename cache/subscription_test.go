package cache_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// A cache on one-shot watches learns that one fired from its client's
// subscription. When the cache falls behind that (held taking a snapshot
// while a flood of its client's other events passes the subscription's
// buffer), the subscription ends: the cache subscribes again, looks at
// every watch, and goes on following the tree, without anything asking
// it to (WaitFor's sync would wake it).
func TestOneShotCacheAfterSubscriptionOverflow(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const bound = 8
		ctx := recipetest.Context(t)
		w := b.Connect(t)
		r := dir(t, w)
		mustCreate(t, w, r+"/a")
		c := b.Connect(t, client.WithSubscriptionBuffer(bound))
		cc, err := cache.OpenTree(ctx, c, r, cache.WithOneShotWatches())
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		flood := dir(t, w)
		feed, err := c.Watch(ctx, flood, client.Recursive, client.WithWatchBuffer(10*bound))
		if err != nil {
			t.Fatal(err)
		}
		defer feed.Close()
		witness := c.Subscribe()
		defer witness.Close()

		// Hold the cache in the snapshot of /a's first change (whose
		// read set /a's watch again).
		held, release := make(chan struct{}), make(chan struct{})
		var once, released sync.Once
		free := func() { released.Do(func() { close(release) }) }
		defer free()
		defer cache.OnPublish(r, func(s *cache.Snapshot) {
			if n, ok := s.Get(r + "/a"); ok && string(n.Data) == "1" {
				once.Do(func() { close(held); <-release })
			}
		})()
		if _, err := w.Set(ctx, r+"/a", []byte("1"), -1); err != nil {
			t.Fatal(err)
		}
		select {
		case <-held:
		case <-time.After(zktest.Scale(20 * time.Second)):
			t.Fatal("the cache took no snapshot of the change")
		}
		ops := make([]client.Op, 2*bound)
		for i := range ops {
			ops[i] = client.CreateOp(fmt.Sprintf("%s/n%d", flood, i), nil, client.Persistent)
		}
		if _, err := c.Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
		if err := witness.Err(); err == nil {
			t.Fatal("the flood did not overflow a subscription that was not read")
		}
		free()

		if _, err := w.Set(ctx, r+"/a", []byte("2"), -1); err != nil {
			t.Fatal(err)
		}
		recipetest.Eventually(t, "the cache has the change after its subscription overflowed", func() bool {
			n, ok := cc.Snapshot().Get(r + "/a")
			return ok && string(n.Data) == "2"
		})
		if err := cc.Err(); err != nil {
			t.Fatalf("the cache stopped: %v", err)
		}
	})
}

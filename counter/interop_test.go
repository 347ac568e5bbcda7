package counter_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// Curator's DistributedAtomicLong and zkit incrementing one path at once
// reach the exact total, and read each other's values.
func TestCuratorInterop(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const threads, curatorEach = 4, 100
		const sessions, goroutines, zkitEach = 4, 4, 25
		ctx := recipetest.Context(t)
		peer := recipetest.StartCuratorCounter(t, b.Servers)
		path := counterPath(t)

		// Curator creates the node; zkit reads and adds to it.
		peer.Send("add %s 7", path)
		peer.Expect("value 7")
		k := counter.New(b.Connect(t), path)
		if v, err := k.Add(ctx, 3); err != nil || v != 10 {
			t.Fatalf("zkit Add(3) after Curator's add(7) = %d, %v", v, err)
		}
		peer.Send("get %s", path)
		peer.Expect("value 10")

		// Both at once.
		peer.Send("increments %s %d %d", path, threads, curatorEach)
		var zkitDone atomic.Int64
		var wg sync.WaitGroup
		for range sessions {
			c := b.Connect(t)
			for range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					kc := counter.New(c, path)
					for range zkitEach {
						if _, err := kc.Add(ctx, 1); err != nil {
							t.Error(err)
							return
						}
						zkitDone.Add(1)
					}
				}()
			}
		}
		wg.Wait()
		line := peer.Next()
		n, err := strconv.ParseInt(strings.TrimPrefix(line, "incremented "), 10, 64)
		if err != nil || n != threads*curatorEach {
			t.Fatalf("Curator peer: %q, want %d increments", line, threads*curatorEach)
		}
		want := 10 + n + zkitDone.Load()
		if v, err := k.Get(ctx); err != nil || v != want {
			t.Fatalf("zkit reads %d, %v; want %d", v, err, want)
		}
		peer.Send("get %s", path)
		peer.Expect(fmt.Sprintf("value %d", want))
	})
}

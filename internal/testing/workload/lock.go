package workload

import (
	"context"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/rwlock"
)

// locker is what lock.Lock and rwlock.RWLock (for writing) offer.
type locker interface {
	Lock(context.Context) (*recipes.Lease, error)
}

// Lock is W1_lock on zkit's lock: clients loop acquire then release, with
// nothing in between. One operation is one acquisition; its latency runs
// from the start of Lock until it returns.
func Lock() Spec {
	return handoffs("zkit.Lock", func(c *client.Client, path string) locker { return lock.New(c, path) })
}

// RWLock is W1_lock on the write side of zkit's read/write lock.
func RWLock() Spec {
	return handoffs("zkit.RWLock", func(c *client.Client, path string) locker { return rwlock.New(c, path) })
}

func handoffs(impl string, newLock func(*client.Client, string) locker) Spec {
	return Spec{Workload: "W1_lock", Impl: impl, Setup: func(ctx context.Context, p Point) (*Instance, error) {
		cs, path, closeAll, err := connectAt(ctx, p, "lock")
		if err != nil {
			return nil, err
		}
		locks := make([]locker, p.Clients)
		for i := range locks {
			locks[i] = newLock(cs[i%len(cs)], path)
		}
		var ex exclusion
		return &Instance{
			Op: func(ctx context.Context, i int) (time.Duration, error) {
				t0 := time.Now()
				lease, err := locks[i].Lock(ctx)
				if err != nil {
					return 0, err
				}
				lat := time.Since(t0)
				ex.enter()
				ex.leave()
				return lat, lease.Unlock(ctx)
			},
			Check: func(context.Context) []string { return []string{ex.note()} },
			Close: closeAll,
		}, nil
	}}
}

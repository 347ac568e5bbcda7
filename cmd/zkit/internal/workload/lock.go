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
	return handoffs("W1_lock", "zkit.Lock", 0, func(c *client.Client, path string) locker { return lock.New(c, path) })
}

// RWLock is W1_lock on the write side of zkit's read/write lock.
func RWLock() Spec {
	return handoffs("W1_lock", "zkit.RWLock", 0, func(c *client.Client, path string) locker { return rwlock.New(c, path) })
}

// SharedSessions is how many sessions the clients of W1_lock_shared use.
const SharedSessions = 4

// LockShared is W1_lock_shared on zkit's lock: the point's clients are
// goroutines over SharedSessions sessions, and those of one session share
// one Lock with combining (lock.WithCombining(8)).
func LockShared() Spec {
	return shared(handoffs("W1_lock_shared", "zkit.Lock", SharedSessions, func(c *client.Client, path string) locker {
		return lock.New(c, path, lock.WithCombining(8))
	}))
}

// SharedGoroutines is the client count W1_lock_shared is defined at.
const SharedGoroutines = 32

func shared(s Spec) Spec {
	s.Clients = SharedGoroutines
	return s
}

// handoffs is W1 on the lockers newLock makes: one a client, or with a
// number of sessions, one a session that its clients share.
func handoffs(workload, impl string, sessions int, newLock func(*client.Client, string) locker) Spec {
	return Spec{Workload: workload, Impl: impl, Setup: func(ctx context.Context, p Point) (*Instance, error) {
		q := p
		if sessions > 0 {
			q.Clients = sessions
		}
		cs, path, closeAll, err := connectAt(ctx, q, "lock")
		if err != nil {
			return nil, err
		}
		locks := make([]locker, p.Clients)
		for i := range locks {
			if sessions > 0 && i >= len(cs) {
				locks[i] = locks[i%len(cs)]
				continue
			}
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

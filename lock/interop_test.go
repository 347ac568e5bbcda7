package lock_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
)

// A zkit lock and Curator's InterProcessMutex on the same path exclude each
// other, both ways, and hand off to each other in queue order.
func TestCuratorInterop(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		java := recipetest.StartCurator(t, b.Servers)

		// zkit holds: Curator cannot get it.
		goHolder, err := lock.New(c, dir).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		java.Send("j1 mutex %s try 300", dir)
		java.Expect("j1 timeout")

		// Curator queues behind zkit, and zkit behind Curator.
		java.Send("j1 mutex %s acquire", dir)
		recipetest.WaitChildren(t, c, dir, 2)
		var goHeld atomic.Bool
		goNext := make(chan *lock.Lease, 1)
		go func() {
			l, err := lock.New(b.Connect(t), dir).Lock(ctx)
			if err != nil {
				t.Error(err)
			}
			goHeld.Store(true)
			goNext <- l
		}()
		recipetest.WaitChildren(t, c, dir, 3)
		java.Quiet("zkit holds the lock")

		// zkit releases (with its release signal): Curator's waiter takes it.
		goHolder.Unlock(ctx)
		java.Expect("j1 acquired")
		if _, err := lock.New(c, dir).TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("zkit TryLock while Curator holds: %v, want ErrLocked", err)
		}
		if goHeld.Load() {
			t.Fatal("zkit waiter acquired while Curator held the lock")
		}

		// Curator releases (a plain delete): zkit's waiter takes it.
		java.Send("j1 mutex %s release", dir)
		java.Expect("j1 released")
		l := <-goNext
		if l == nil {
			t.FailNow()
		}
		java.Send("j2 mutex %s try 300", dir)
		java.Expect("j2 timeout")
		l.Unlock(ctx)
		recipetest.WaitChildren(t, c, dir, 0)
	})
}

package lock_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/zkit-dev/zkit/lock"
)

// A zkit lock and Curator's InterProcessMutex on the same path exclude each
// other, both ways, and hand off to each other in queue order.
func TestCuratorInterop(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := testCtx(t)
		c := b.connect(t)
		dir := lockDir(t, c)
		java := startCurator(t, b.servers)

		// zkit holds: Curator cannot get it.
		goHolder, err := lock.New(c, dir).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		java.send("j1 mutex %s try 300", dir)
		java.expect("j1 timeout")

		// Curator queues behind zkit, and zkit behind Curator.
		java.send("j1 mutex %s acquire", dir)
		waitChildren(t, c, dir, 2)
		var goHeld atomic.Bool
		goNext := make(chan *lock.Lease, 1)
		go func() {
			l, err := lock.New(b.connect(t), dir).Lock(ctx)
			if err != nil {
				t.Error(err)
			}
			goHeld.Store(true)
			goNext <- l
		}()
		waitChildren(t, c, dir, 3)
		java.quiet("zkit holds the lock")

		// zkit releases (with its release signal): Curator's waiter takes it.
		goHolder.Unlock(ctx)
		java.expect("j1 acquired")
		if _, err := lock.New(c, dir).TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("zkit TryLock while Curator holds: %v, want ErrLocked", err)
		}
		if goHeld.Load() {
			t.Fatal("zkit waiter acquired while Curator held the lock")
		}

		// Curator releases (a plain delete): zkit's waiter takes it.
		java.send("j1 mutex %s release", dir)
		java.expect("j1 released")
		l := <-goNext
		if l == nil {
			t.FailNow()
		}
		java.send("j2 mutex %s try 300", dir)
		java.expect("j2 timeout")
		l.Unlock(ctx)
		waitChildren(t, c, dir, 0)
	})
}

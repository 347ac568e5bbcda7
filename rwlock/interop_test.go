package rwlock_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/zktest"
)

// zkit's RWLock and Curator's InterProcessReadWriteLock on the same path:
// readers share across the two, writers exclude both ways, and each waits
// behind the other in queue order.
func TestCuratorInterop(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		java := recipetest.StartCurator(t, b.Servers)

		// A Curator reader and a zkit reader share.
		java.Send("r1 read %s acquire", dir)
		java.Expect("r1 acquired")
		r, err := rwlock.New(c, dir).TryRLock(ctx)
		if err != nil {
			t.Fatalf("zkit reader next to a Curator reader: %v", err)
		}
		r.Unlock(ctx)

		// A Curator reader keeps a zkit writer out...
		if _, err := rwlock.New(c, dir).TryLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
			t.Fatalf("zkit writer while Curator reads: %v, want ErrLocked", err)
		}
		// ...who then waits for it, and Curator readers that come later
		// wait for the zkit writer.
		var goHeld atomic.Bool
		goWriter := make(chan *rwlock.Lease, 1)
		go func() {
			l, err := rwlock.New(b.Connect(t), dir).Lock(ctx)
			if err != nil {
				t.Error(err)
			}
			goHeld.Store(true)
			goWriter <- l
		}()
		recipetest.WaitChildren(t, c, dir, 2)
		java.Send("r2 read %s try 300", dir)
		java.Expect("r2 timeout")
		if goHeld.Load() {
			t.Fatal("zkit writer acquired while a Curator reader held")
		}
		java.Send("r1 read %s release", dir)
		java.Expect("r1 released")
		w := <-goWriter
		if w == nil {
			t.FailNow()
		}

		// The zkit writer keeps Curator readers and writers out.
		java.Send("r3 read %s try 300", dir)
		java.Expect("r3 timeout")
		java.Send("w1 write %s try 300", dir)
		java.Expect("w1 timeout")

		// A Curator writer queues behind it and gets it on release.
		java.Send("w1 write %s acquire", dir)
		recipetest.WaitChildren(t, c, dir, 2)
		w.Unlock(ctx)
		java.Expect("w1 acquired")
		if _, err := rwlock.New(c, dir).TryRLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
			t.Fatalf("zkit reader while Curator writes: %v, want ErrLocked", err)
		}
		java.Send("w1 write %s release", dir)
		java.Expect("w1 released")
		recipetest.WaitChildren(t, c, dir, 0)
	})
}

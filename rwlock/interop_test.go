package rwlock_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/zkit-dev/zkit/rwlock"
)

// zkit's RWLock and Curator's InterProcessReadWriteLock on the same path:
// readers share across the two, writers exclude both ways, and each waits
// behind the other in queue order.
func TestCuratorInterop(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := testCtx(t)
		c := b.connect(t)
		dir := lockDir(t, c)
		java := startCurator(t, b.servers)

		// A Curator reader and a zkit reader share.
		java.send("r1 read %s acquire", dir)
		java.expect("r1 acquired")
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
			l, err := rwlock.New(b.connect(t), dir).Lock(ctx)
			if err != nil {
				t.Error(err)
			}
			goHeld.Store(true)
			goWriter <- l
		}()
		waitChildren(t, c, dir, 2)
		java.send("r2 read %s try 300", dir)
		java.expect("r2 timeout")
		if goHeld.Load() {
			t.Fatal("zkit writer acquired while a Curator reader held")
		}
		java.send("r1 read %s release", dir)
		java.expect("r1 released")
		w := <-goWriter
		if w == nil {
			t.FailNow()
		}

		// The zkit writer keeps Curator readers and writers out.
		java.send("r3 read %s try 300", dir)
		java.expect("r3 timeout")
		java.send("w1 write %s try 300", dir)
		java.expect("w1 timeout")

		// A Curator writer queues behind it and gets it on release.
		java.send("w1 write %s acquire", dir)
		waitChildren(t, c, dir, 2)
		w.Unlock(ctx)
		java.expect("w1 acquired")
		if _, err := rwlock.New(c, dir).TryRLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
			t.Fatalf("zkit reader while Curator writes: %v, want ErrLocked", err)
		}
		java.send("w1 write %s release", dir)
		java.expect("w1 released")
		waitChildren(t, c, dir, 0)
	})
}

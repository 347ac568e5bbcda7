package semaphore_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// zkit and Curator's InterProcessSemaphoreV2 share one semaphore: their
// leases count together, and each kind waits directly behind the other,
// for a lease and for the mutex, in both orders.
func TestCuratorInterop(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := semPath(t, c)
		java := recipetest.StartSemaphorePeer(t, b.Servers)
		sem := func() *semaphore.Semaphore { return semaphore.New(b.Connect(t), path, 2) }

		// One lease each: the semaphore is full for both.
		goHeld, err := sem().Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		java.Send("j1 acquire %s 2", path)
		java.Expect("j1 acquired")
		if _, err := sem().TryAcquire(ctx); !errors.Is(err, semaphore.ErrNoLease) {
			t.Fatalf("zkit TryAcquire with a zkit and a Curator lease held: %v", err)
		}
		java.Send("j2 try %s 2 300", path)
		java.Expect("j2 timeout")
		waitNodes(t, c, path, 2, 0)

		// Curator waits at the front (holding the mutex, with its node),
		// zkit behind it: a zkit release lets Curator in, not zkit.
		java.Send("j3 acquire %s 2", path)
		waitNodes(t, c, path, 3, 1)
		goNext := acquireN(ctx, sem(), 1)
		waitNodes(t, c, path, 3, 2)
		unlock(t, goHeld)
		java.Expect("j3 acquired")
		waitNodes(t, c, path, 2, 1)
		pending(t, goNext, "the zkit waiter behind Curator's")

		// A Curator release lets the zkit waiter in.
		java.Send("j1 release")
		java.Expect("j1 released")
		goLeases := got(t, goNext)
		waitNodes(t, c, path, 2, 0)

		// Now zkit waits at the front (holding the mutex, without a node),
		// Curator behind it: a Curator release lets zkit in, not Curator.
		goFront := acquireN(ctx, sem(), 1)
		waitNodes(t, c, path, 2, 1)
		java.Send("j4 acquire %s 2", path)
		waitNodes(t, c, path, 2, 2)
		java.Send("j3 release")
		java.Expect("j3 released")
		goLeases = append(goLeases, got(t, goFront)...)
		java.Quiet("zkit took the free lease")
		// A zkit release lets Curator in.
		unlock(t, goLeases[0])
		java.Expect("j4 acquired")
		if _, err := sem().TryAcquire(ctx); !errors.Is(err, semaphore.ErrNoLease) {
			t.Fatalf("zkit TryAcquire with both leases held: %v", err)
		}
		java.Send("j4 release")
		java.Expect("j4 released")
		unlock(t, goLeases[1])
		waitNodes(t, c, path, 0, 0)
	})
}

// Curator and zkit holders churning on one semaphore never hold more than
// its maximum together: each holder, Java or Go, puts a marker node in a
// shared directory while it holds and counts the markers there.
func TestCuratorChurn(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const limit, perSide, rounds = 3, 4, 15
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := semPath(t, admin)
		inside := path + "-inside"
		if _, err := admin.Create(ctx, inside, nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
		java := recipetest.StartSemaphorePeer(t, b.Servers)
		for i := range perSide {
			java.Send("j%d churn %s %d %d %s", i, path, limit, rounds, inside)
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			most int
		)
		for range perSide {
			c := b.Connect(t)
			sem := semaphore.New(c, path, limit)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					l, err := sem.Acquire(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					marker, err := c.Create(ctx, inside+"/g-", nil, client.EphemeralSequential)
					if err == nil {
						var kids []string
						kids, _, err = c.Children(ctx, inside)
						mu.Lock()
						most = max(most, len(kids))
						mu.Unlock()
						time.Sleep(2 * time.Millisecond)
						if derr := c.Delete(ctx, marker, -1); err == nil {
							err = derr
						}
					}
					if uerr := l.Unlock(ctx); err == nil {
						err = uerr
					}
					if err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		for range perSide {
			line := java.Next()
			var id string
			var n int
			if _, err := fmt.Sscanf(line, "%s churned %d", &id, &n); err != nil {
				t.Fatalf("curator peer: %q", line)
			}
			if n > limit {
				t.Errorf("a Curator holder counted %d holders, max %d", n, limit)
			}
			mu.Lock()
			most = max(most, n)
			mu.Unlock()
		}
		if most > limit {
			t.Fatalf("%d holders at once, max %d", most, limit)
		}
		t.Logf("%d rounds on each side, at most %d holders at once", perSide*rounds, most)
		waitNodes(t, admin, path, 0, 0)
	})
}

package semaphore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// Leases.Unlock hands back every lease of an AcquireN in one call: each
// ends with ErrReleased, their nodes are gone, and a waiter for all of
// them gets them.
func TestLeasesUnlock(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := semPath(t, admin)
		ls, err := semaphore.New(b.Connect(t), path, 3).AcquireN(ctx, 3)
		if err != nil {
			t.Fatal(err)
		}
		next := acquireN(ctx, semaphore.New(b.Connect(t), path, 3), 3)
		waitNodes(t, admin, path, 3, 1)
		pending(t, next, "AcquireN(3) while 3 are held")
		if err := ls.Unlock(ctx); err != nil {
			t.Fatalf("Unlock: %v", err)
		}
		for i, l := range ls {
			if !errors.Is(l.Err(), semaphore.ErrReleased) {
				t.Fatalf("lease %d after Unlock: %v, want ErrReleased", i, l.Err())
			}
		}
		if err := ls.Unlock(ctx); err != nil {
			t.Fatalf("Unlock again: %v, want nil again", err)
		}
		if err := semaphore.Leases(got(t, next)).Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		waitNodes(t, admin, path, 0, 0)
	})
}

// A lease already lost when Leases.Unlock is called does not keep the
// others from being released: Unlock releases them, and returns the lost
// lease's error, naming its node and matching ErrLost. Leases lost with
// their session make Unlock's error match client.ErrSessionLost too.
func TestLeasesUnlockPartly(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := semPath(t, admin)
		ls, err := semaphore.New(b.Connect(t), path, 3).AcquireN(ctx, 3)
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.Delete(ctx, ls[1].Node(), -1); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, ls[1].Done(), "the end of the lease whose node was deleted")
		err = ls.Unlock(ctx)
		if !errors.Is(err, semaphore.ErrNodeDeleted) || !strings.Contains(err.Error(), ls[1].Node()) {
			t.Fatalf("Unlock with a lease lost: %v, want ErrNodeDeleted naming %s", err, ls[1].Node())
		}
		for _, i := range []int{0, 2} {
			if strings.Contains(err.Error(), ls[i].Node()) || !errors.Is(ls[i].Err(), semaphore.ErrReleased) {
				t.Fatalf("lease %d: %v (Unlock said %v), want it released", i, ls[i].Err(), err)
			}
		}
		waitNodes(t, admin, path, 0, 0)

		doomed := b.Connect(t)
		ls, err = semaphore.New(doomed, path, 3, semaphore.WithSuspendTolerance(time.Hour)).AcquireN(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		b.ExpireSession(t, doomed.Session())
		for _, l := range ls {
			recipetest.Within(t, l.Done(), "the end of a lease whose session expired")
		}
		err = ls.Unlock(ctx)
		if !errors.Is(err, semaphore.ErrLost) || !client.IsSessionLost(err) {
			t.Fatalf("Unlock after the session expired: %v, want ErrLost and a lost session", err)
		}
		for _, l := range ls {
			if !strings.Contains(err.Error(), l.Node()) {
				t.Fatalf("Unlock after the session expired: %v, does not name %s", err, l.Node())
			}
		}
		waitNodes(t, admin, path, 0, 0)
	})
}

package lock_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
)

// A lock whose directory and parents do not exist yet, with the
// ensemble's leader killed (or cut from the other members) while the first
// contenders create them and their nodes: Lock and Unlock succeed or report
// a loss (ErrLost), no two leases are held at once, no node is left behind
// while the contenders' sessions still live, the directory is a container
// (the server deletes it once empty) and its parents persistent, all with
// the lock's ACL.
func TestFailoverWhileCreatingDirectory(t *testing.T) {
	// An isolated leader keeps its clients until it notices it lost the
	// quorum.
	faults := slices.Concat(recipetest.LeaderKills, []recipetest.Fault{{Isolate: true}})
	recipetest.EachFault(t, faults, func(t *testing.T, e *recipetest.Ensemble, f recipetest.Fault) {
		clients := e.Clients(t, 4)
		dir, parents := recipetest.UnderMissingParents(t, "lock")
		var res recipetest.Exclusion
		e.Run(t, f, len(clients), func(ctx context.Context, i int) {
			l := lock.New(clients[i], dir, lock.WithACL(recipetest.NoAdminACL...))
			for range 2 {
				lease, err := l.Lock(ctx)
				if !recipetest.LostAtMost(t, "Lock", err) {
					continue
				}
				if lease.Err() == nil {
					res.Enter(lease.Token())
					time.Sleep(5 * time.Millisecond)
					res.Leave()
				}
				recipetest.LostAtMost(t, "Unlock", lease.Unlock(ctx))
			}
		})
		if v := res.Violations(); len(v) > 0 {
			t.Errorf("exclusion violated: %v", v)
		}
		recipetest.Layout{
			Containers: []string{dir},
			Persistent: parents,
			ACL:        recipetest.NoAdminACL,
		}.Require(t, clients[0])
	})
}

// The leader is killed right before the holder's Unlock, with a waiter
// behind it: Unlock returns nil or a loss, the waiter gets the lock, and
// no node is left behind.
func TestFailoverDuringUnlock(t *testing.T) {
	e := recipetest.StartEnsemble(t)
	ctx := recipetest.Context(t)
	clients := e.Clients(t, 2)
	a, b := clients[0], clients[1]
	dir, parents := recipetest.UnderMissingParents(t, "lock")
	first, err := lock.New(a, dir).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type locked struct {
		lease *lock.Lease
		err   error
	}
	got := make(chan locked, 1)
	go func() {
		l, err := lock.New(b, dir).Lock(ctx)
		got <- locked{l, err}
	}()
	recipetest.WaitChildren(t, a, dir, 2)
	e.Strike(t, recipetest.Fault{At: -1}, func() {
		recipetest.LostAtMost(t, "Unlock", first.Unlock(ctx))
	})
	second := <-got
	if second.err != nil {
		t.Fatalf("waiter: %v", second.err)
	}
	recipetest.LostAtMost(t, "second Unlock", second.lease.Unlock(ctx))
	recipetest.Layout{Containers: []string{dir}, Persistent: parents}.Require(t, a)
}

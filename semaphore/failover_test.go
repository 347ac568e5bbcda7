package semaphore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/semaphore"
)

// A semaphore whose path does not exist yet, with the ensemble's leader
// killed while the first participants create its directories and nodes:
// each Acquire returns a lease or a loss, never more than max leases are
// held at once, no node is left in locks or leases while the sessions
// live, the directories are containers and the path's nodes persistent,
// all with the ACL.
func TestFailoverWhileCreatingDirectories(t *testing.T) {
	const max = 2
	recipetest.EachFault(t, recipetest.LeaderKills, func(t *testing.T, e *recipetest.Ensemble, f recipetest.Fault) {
		clients := e.Clients(t, 5)
		path, parents := recipetest.UnderMissingParents(t, "sem")
		var inside atomic.Int32
		e.Run(t, f, len(clients), func(ctx context.Context, i int) {
			s := semaphore.New(clients[i], path, max, semaphore.WithACL(recipetest.NoAdminACL...))
			for range 2 {
				lease, err := s.Acquire(ctx)
				if !recipetest.LostAtMost(t, "Acquire", err) {
					continue
				}
				if lease.Err() == nil {
					if n := inside.Add(1); n > max {
						t.Errorf("%d leases held at once", n)
					}
					time.Sleep(5 * time.Millisecond)
					inside.Add(-1)
				}
				recipetest.LostAtMost(t, "Unlock", lease.Unlock(ctx))
			}
		})
		recipetest.Layout{
			Containers: []string{path + "/locks", path + "/leases"},
			Persistent: append(parents, path),
			ACL:        recipetest.NoAdminACL,
		}.Require(t, clients[0])
	})
}

package election_test

import (
	"testing"

	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
)

// The behaviour every queue recipe owes (exclusion with fencing, FIFO,
// holder expiry, node changes, suspension, lost create replies,
// cancellation, bad paths, foreign nodes, the directory): see
// recipetest.RunQueueContract. This package's own tests are what only an
// election has: ids, confirmation before leading, observation, the
// partitioned leader's fencing, and interop with Curator's LeaderLatch.
func TestContract(t *testing.T) {
	recipetest.RunQueueContract(t, recipetest.QueueRecipe[*election.Election, *election.Term]{
		New: func(p recipetest.Participant) *election.Election {
			return election.New(p.Client, p.Path, p.ID, election.WithSuspendTolerance(p.SuspendTolerance))
		},
		Modes: []recipetest.Mode[*election.Election, *election.Term]{
			{Name: "campaign", Marker: "latch-", Exclusive: true, Acquire: (*election.Election).Campaign},
		},
		Release: (*election.Term).Resign,
	})
}

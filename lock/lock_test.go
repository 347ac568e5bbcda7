package lock_test

import (
	"testing"

	"github.com/zkit-dev/zkit/internal/testing/recipetest"
	"github.com/zkit-dev/zkit/lock"
)

// The behaviour every queue recipe owes (exclusion with fencing, FIFO,
// loss, lost create replies, cancellation, TryLock, bad input): see
// recipetest.RunQueueContract. This package's own tests are the thousand
// waiters (many_test.go) and the interop with Curator.
func TestContract(t *testing.T) {
	recipetest.RunQueueContract(t, recipetest.QueueRecipe[*lock.Lock, *lock.Lease]{
		New: func(p recipetest.Participant) *lock.Lock {
			return lock.New(p.Client, p.Path, lock.WithSuspendTolerance(p.SuspendTolerance))
		},
		Modes: []recipetest.Mode[*lock.Lock, *lock.Lease]{
			{Name: "lock", Marker: "lock-", Exclusive: true, Acquire: (*lock.Lock).Lock, Try: (*lock.Lock).TryLock},
		},
		Release: (*lock.Lease).Unlock,
	})
}

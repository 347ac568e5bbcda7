package lock_test

import (
	"sync"
	"testing"

	"github.com/zkit-dev/zkit/internal/recipetest"
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

// The same contract with combining on, the contenders of one client
// sharing one Lock (as WithCombining asks): their hand-overs are local,
// and every guarantee of the contract holds across them.
func TestCombinedContract(t *testing.T) {
	var (
		mu     sync.Mutex
		shared = map[recipetest.Participant]*lock.Lock{} // by client, path and tolerance

	)
	recipetest.RunQueueContract(t, recipetest.QueueRecipe[*lock.Lock, *lock.Lease]{
		New: func(p recipetest.Participant) *lock.Lock {
			mu.Lock()
			defer mu.Unlock()
			key := recipetest.Participant{Client: p.Client, Path: p.Path, SuspendTolerance: p.SuspendTolerance}
			if l := shared[key]; l != nil {
				return l
			}
			l := lock.New(p.Client, p.Path, lock.WithSuspendTolerance(p.SuspendTolerance), lock.WithCombining(4))
			shared[key] = l
			return l
		},
		Modes: []recipetest.Mode[*lock.Lock, *lock.Lease]{
			{Name: "lock", Marker: "lock-", Exclusive: true, Acquire: (*lock.Lock).Lock, Try: (*lock.Lock).TryLock},
		},
		Release: (*lock.Lease).Unlock,
	})
}

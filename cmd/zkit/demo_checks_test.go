package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/rendezvous"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// Demo steps that must catch a broken recipe every time, not only when
// the workers happen to crowd in: each runs once on the real recipe (it
// holds) and once on a recipe broken on purpose (a violation), at the
// smallest worker count and at the default.

// demoEnvFor is a demo environment on b, under a root of the test's own.
func demoEnvFor(t *testing.T, b zktest.Backend, workers, rounds int) (*demoEnv, context.Context) {
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
	t.Cleanup(cancel)
	return &demoEnv{servers: b.Servers, srv: b.Reference(), root: zktest.UniquePath(t), workers: workers, rounds: rounds}, ctx
}

// checkCatches runs a step's body on the real recipe and on a broken one.
func checkCatches(t *testing.T, b zktest.Backend, workers int, run func(ctx context.Context, d *demoEnv, broken bool) (string, error)) {
	for _, broken := range []bool{false, true} {
		d, ctx := demoEnvFor(t, b, workers, 5)
		detail, err := run(ctx, d, broken)
		var v *violation
		switch {
		case !broken && err != nil:
			t.Fatalf("%d workers, the real recipe: %v", workers, err)
		case broken && !errors.As(err, &v):
			t.Fatalf("%d workers, the recipe broken on purpose: %q, %v; want a violation", workers, detail, err)
		}
	}
}

// A semaphore that lets in one holder more than its maximum fails the
// semaphore step, with 2 workers (one lease) as with 8 (four).
func TestDemoSemaphoreCatchesOverAdmission(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		for _, workers := range []int{2, 3, 8} {
			checkCatches(t, b, workers, func(ctx context.Context, d *demoEnv, broken bool) (string, error) {
				newSem := semaphore.New
				if broken {
					newSem = func(c *client.Client, path string, max int, opts ...semaphore.Option) *semaphore.Semaphore {
						return semaphore.New(c, path, max+1, opts...)
					}
				}
				return semaphoreRun(ctx, d, newSem)
			})
		}
	})
}

// A Wait that does not wait for the master (it returns zr's data as it
// first reads it) fails the rendezvous step, with 2 workers as with 8:
// the master publishes only once every worker has read zr.
func TestDemoRendezvousCatchesWaitThatDoesNotWait(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		for _, workers := range []int{2, 8} {
			checkCatches(t, b, workers, func(ctx context.Context, d *demoEnv, broken bool) (string, error) {
				wait := func(ctx context.Context, c *client.Client, path string) ([]byte, error) {
					return rendezvous.New(c, path).Wait(ctx)
				}
				if broken {
					wait = func(ctx context.Context, c *client.Client, path string) ([]byte, error) {
						data, _, err := c.Get(ctx, path)
						return data, err
					}
				}
				return rendezvousRun(ctx, d, wait)
			})
		}
	})
}

// exclusiveReaders is a read/write lock broken on purpose: its readers
// take the write lock, so that they never share.
type exclusiveReaders struct{ *rwlock.RWLock }

func (e exclusiveReaders) RLock(ctx context.Context) (*rwlock.Lease, error)    { return e.Lock(ctx) }
func (e exclusiveReaders) TryRLock(ctx context.Context) (*rwlock.Lease, error) { return e.TryLock(ctx) }

// A read/write lock whose readers exclude each other fails the rwlock
// step, whose table says "readers share", with 2 workers as with 8.
func TestDemoRWLockCatchesExclusiveReaders(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		for _, workers := range []int{2, 8} {
			checkCatches(t, b, workers, func(ctx context.Context, d *demoEnv, broken bool) (string, error) {
				return rwlockRun(ctx, d, func(c *client.Client, path string) rwLocker {
					if broken {
						return exclusiveReaders{rwlock.New(c, path)}
					}
					return rwlock.New(c, path)
				})
			})
		}
	})
}

// eagerTerm is an election term broken on purpose: its candidate leads
// as soon as its node is created, without waiting for the nodes below it.
type eagerTerm struct{ *recipes.Lease }

func (t eagerTerm) Resign(ctx context.Context) error { return t.Unlock(ctx) }

// An election whose candidates lead without waiting for the lower nodes
// fails the election step, "one leader at a time", with 2 workers as with
// 8, even when the simultaneous leaders' writes arrive in token order.
func TestDemoElectionCatchesSimultaneousLeaders(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		for _, workers := range []int{2, 8} {
			checkCatches(t, b, workers, func(ctx context.Context, d *demoEnv, broken bool) (string, error) {
				return electionRun(ctx, d, func(c *client.Client, path, id string) campaignFunc {
					if !broken {
						return electionCandidate(c, path, id)
					}
					q := recipes.NewQueue(c, path, nil, recipes.LatchKind)
					return func(ctx context.Context) (leaderTerm, error) {
						t, err := q.Join(ctx, recipes.LatchKind, []byte(id))
						if err != nil {
							return nil, err
						}
						return eagerTerm{t.Hold(recipes.LeaseOptions{PlainRelease: true})}, nil
					}
				})
			})
		}
	})
}

// The lost-reply lock step says the create's reply was dropped only if
// the fault struck: armed on a server the lock does not talk to, it never
// does, and the step reports a violation instead of "held".
func TestDemoLockLostReplyChecksTheFault(t *testing.T) {
	t.Parallel()
	d, ctx := demoEnvFor(t, zktest.ReferenceBackend(t), 2, 1)
	d.srv = zktest.NewServer(t) // the fault's server; the lock uses d.servers
	detail, err := lockLostReply(ctx, d)
	var v *violation
	if !errors.As(err, &v) {
		t.Fatalf("the fault never struck, yet the step returned %q, %v; want a violation", detail, err)
	}
}

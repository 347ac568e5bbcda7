package lock

import (
	"context"
	"slices"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// MultiLease is several locks held together, as one; see
// recipes.JointLease for Done, Context, Err, Token, Guard, Multi, Parts
// and Unlock. It ends as soon as any of its locks is lost.
type MultiLease = recipes.JointLease

// MultiLock is several exclusive locks taken together, all or nothing:
// Curator's InterProcessMultiLock over InterProcessMutexes. Each path is a
// Lock of its own (the same nodes, so single locks, other multi-locks and
// Curator's mutexes on those paths exclude it as usual). It is safe for
// concurrent use; every call to Lock or TryLock is a separate attempt.
//
// The locks are taken one after the other in the order of their paths
// (byte-wise), whatever the order given to NewMulti: two multi-locks over
// overlapping sets then wait for each other in one order and never
// deadlock. Curator's InterProcessMultiLock takes its locks in the order
// given, so only Java processes that list the paths sorted share that
// guarantee with zkit. The read and write sides of rwlock are not parts a
// MultiLock takes.
type MultiLock struct {
	paths []string
	locks []*Lock
	c     *client.Client
}

// NewMulti returns the multi-lock over paths (each a lock's directory);
// a path given twice counts once. opts apply to every lock. It does no
// I/O; the paths are checked by Lock and TryLock.
func NewMulti(c *client.Client, paths []string, opts ...Option) *MultiLock {
	paths = slices.Clone(paths)
	slices.Sort(paths)
	paths = slices.Compact(paths)
	m := &MultiLock{paths: paths, c: c}
	for _, p := range paths {
		m.locks = append(m.locks, New(c, p, opts...))
	}
	return m
}

// Paths are the locks' directories, in the order they are taken.
func (m *MultiLock) Paths() []string { return slices.Clone(m.paths) }

// Lock waits until every lock is held and returns them as one lease, or
// returns an error and holds none: ctx's error when ctx ends first (one
// deadline for all of them), an *client.InputError for no paths or an
// invalid one (nothing is sent), the first failing lock's error otherwise
// (it names that lock's path), client.ErrClosed once the client is
// closed. Called while the client is between two sessions, it waits
// within ctx for the next one.
//
// On every error the locks already taken are released and the waiting
// attempt's node deleted, at once or, when that is not possible, in the
// background for as long as the client lives.
func (m *MultiLock) Lock(ctx context.Context) (*MultiLease, error) {
	return m.acquire(ctx, "lock", (*Lock).Lock)
}

// TryLock takes every lock if none is held or waited for by another
// attempt, and returns ErrLocked (holding none) otherwise. It does not
// wait for other holders, only for the server's replies.
func (m *MultiLock) TryLock(ctx context.Context) (*MultiLease, error) {
	return m.acquire(ctx, "try lock", (*Lock).TryLock)
}

func (m *MultiLock) acquire(ctx context.Context, op string, take func(*Lock, context.Context) (*Lease, error)) (*MultiLease, error) {
	if len(m.paths) == 0 {
		return nil, &client.InputError{Op: op, Reason: "a multi-lock needs at least one path"}
	}
	parts := make([]recipes.Part, len(m.locks))
	for i, l := range m.locks {
		if err := l.check(op); err != nil {
			return nil, err
		}
		parts[i] = recipes.Part{Path: l.Path(), Acquire: func(ctx context.Context) (*Lease, error) { return take(l, ctx) }}
	}
	return recipes.AcquireAll(ctx, m.c, parts)
}

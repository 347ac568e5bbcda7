package semaphore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
	"github.com/zkit-dev/zkit/recipes"
)

// Lease is one held lease of a semaphore; see recipes.Lease for Done,
// Context, Err, Token, Guard, Multi and Unlock. Unlock deletes its node
// with a plain delete.
type Lease = recipes.Lease

var (
	// ErrNoLease is returned by TryAcquire when no lease is free, or when
	// another attempt is ahead of it.
	ErrNoLease = recipes.ErrWouldBlock
	// ErrLost is matched by every reason a lease ended without Unlock: its
	// session was lost (the error also matches client.ErrSessionLost, or
	// client.ErrClosed after the client's Close), the connection stayed
	// suspended beyond the tolerance (ErrSuspended), or its node was
	// deleted by someone else (ErrNodeDeleted).
	ErrLost = recipes.ErrLost
	// ErrSuspended ends a lease whose connection stayed suspended beyond
	// the tolerance. It matches ErrLost.
	ErrSuspended = recipes.ErrSuspended
	// ErrNodeDeleted ends a lease whose node someone else deleted or wrote
	// to. It matches ErrLost.
	ErrNodeDeleted = recipes.ErrNodeDeleted
	// ErrReleased is the cause of a lease's Context after Unlock.
	ErrReleased = recipes.ErrReleased
)

// Directories and node names of Curator's InterProcessSemaphoreV2
// (layout.Semaphore).
const (
	locksDir  = layout.LocksDir  // its InterProcessMutex
	leasesDir = layout.LeasesDir // the lease nodes
)

// leaseKind is the shape of the lease nodes,
// "<path>/leases/_c_<uuid>-lease-<seq>". They are counted in creation
// order (recipes.Node.Created), not queued.
var leaseKind = recipes.Kind{Marker: layout.LeaseMarker, Recipe: layout.Semaphore.Name}

// Semaphore is a counting semaphore on a ZooKeeper path: at most Max leases
// are held at once, by all the processes that use the path. It is safe for
// concurrent use; every call to Acquire, AcquireN or TryAcquire is a
// separate attempt.
type Semaphore struct {
	c      *client.Client
	path   string
	max    int
	mutex  *recipes.Queue
	leases string
	cfg    config
}

// New returns the semaphore at path with at most max leases. Every
// process that uses the path must give the same max (as with Curator's
// InterProcessSemaphoreV2 built with a number of leases, nothing checks
// it). It does no I/O: the path and max are checked by each acquire.
func New(c *client.Client, path string, max int, opts ...Option) *Semaphore {
	cfg := recipes.Apply(opts)
	s := &Semaphore{
		c:      c,
		path:   path,
		max:    max,
		leases: client.JoinPath(path, leasesDir),
		cfg:    cfg,
	}
	s.mutex = recipes.NewQueue(c, client.JoinPath(path, locksDir), cfg.Logger, recipes.MutexKind).BeforeDir(s.checkPath)
	return s
}

// checkPath refuses, with an error matching recipes.ErrOtherRecipe, a path
// that is a configuration's (or an open double barrier's): its readers
// would take the locks and leases directories for keys. It runs before
// either directory is created (layout.Semaphore's CheckFlag), so that a
// semaphore refused there has written nothing.
func (s *Semaphore) checkPath(ctx context.Context) error {
	return layout.Semaphore.CheckFlag(ctx, s.c, s.path)
}

// Path is the semaphore's directory.
func (s *Semaphore) Path() string { return s.path }

// Max is the number of leases that may be held at once.
func (s *Semaphore) Max() int { return s.max }

// Acquire waits until a lease is free and returns it, or returns an error:
// ctx's error when ctx ends first, an *client.InputError for an invalid
// path, a max below 1 or lease data (WithData) over the server's limit
// (nothing is sent), client.ErrClosed once the client is closed, an error
// matching ErrNodeDeleted when someone else deletes its node while it
// waits. Called while the client is between two sessions (just after one
// was lost), it waits within ctx for the next one. A session lost while
// it waits costs it only its place in line: it queues again under the
// next session (at the back), until ctx ends.
//
// On every error the attempt's nodes are deleted, at once or, when that is
// not possible, in the background for as long as the client lives.
func (s *Semaphore) Acquire(ctx context.Context) (*Lease, error) {
	leases, err := s.acquire(ctx, "acquire", 1, false)
	if err != nil {
		return nil, recipes.Wrap("acquire", s.path, err)
	}
	return leases[0], nil
}

// AcquireN waits until n leases are free and returns them together, or
// none: it never holds some of them while waiting for the others, so two
// callers that each want most of the leases cannot block each other
// forever. n must be between 1 and Max, and n lease nodes with their
// data must fit in one request (an *client.InputError otherwise, before
// anything is sent). Its errors, and the cleanup on every error,
// are Acquire's. Each lease has its own node and token, may be lost on its
// own (someone deletes its node) and released on its own (Unlock); the
// Leases' Unlock releases them all in one call.
func (s *Semaphore) AcquireN(ctx context.Context, n int) (Leases, error) {
	leases, err := s.acquire(ctx, "acquire", n, false)
	return leases, recipes.Wrap(fmt.Sprintf("acquire %d of", n), s.path, err)
}

// TryAcquire takes a lease if one is free and no other attempt is ahead
// of it, and returns ErrNoLease otherwise. It does not wait for holders,
// only for the server's replies (ctx bounds those).
func (s *Semaphore) TryAcquire(ctx context.Context) (*Lease, error) {
	leases, err := s.acquire(ctx, "try acquire", 1, true)
	if err != nil {
		return nil, recipes.Wrap("try acquire", s.path, err)
	}
	return leases[0], nil
}

// check refuses bad input before anything is sent.
func (s *Semaphore) check(op string, n int) error {
	if err := recipes.CheckDir(op, s.path, "semaphore"); err != nil {
		return err
	}
	switch {
	case s.max < 1:
		return &client.InputError{Op: op, Path: s.path, Reason: fmt.Sprintf("max leases %d: must be at least 1", s.max)}
	case n < 1:
		return &client.InputError{Op: op, Path: s.path, Reason: fmt.Sprintf("%d leases asked for: must be at least 1", n)}
	case n > s.max:
		return &client.InputError{Op: op, Path: s.path, Reason: fmt.Sprintf("%d leases asked for: more than the %d there are", n, s.max)}
	}
	// The Multi that will create the lease nodes (WithData, WithACL), with
	// a mutex node's name of the real length: refused here, before the
	// attempt makes the directories and takes the mutex, not after.
	mutex := client.JoinPath(client.JoinPath(s.path, locksDir), client.ProtectedName(client.NewProtectedID(), recipes.MutexKind.Marker)+"0000000000")
	_, ops := s.createOps(n, mutex)
	var ie *client.InputError
	if !errors.As(s.c.CheckMulti(ops...), &ie) {
		return nil // a closed client: the attempt says so
	}
	reason := "lease node: " + ie.Reason
	if ie.Op == "multi" {
		reason = fmt.Sprintf("%d lease nodes with %d bytes of data each: %s", n, len(s.cfg.data), ie.Reason)
	}
	return &client.InputError{Op: op, Path: s.path, Reason: reason, Err: ie.Err}
}

// Option configures a Semaphore.
type Option func(*config)

type config struct {
	recipes.Options
	data []byte
}

// WithSuspendTolerance keeps a lease across a suspended connection for up
// to d before it counts as lost. The default, 0, ends the lease as soon as
// the connection is suspended: from then on the session may expire on the
// server at any moment and another process take the lease. With d > 0 a
// lease survives short network blips, but may be held for up to d after
// another process took it: fence your writes.
func WithSuspendTolerance(d time.Duration) Option {
	return func(c *config) { c.SuspendTolerance = d }
}

// WithData stores data in every lease node this Semaphore creates
// (Curator's setNodeData), for example to say who holds it.
func WithData(data []byte) Option {
	return func(c *config) { c.data = data }
}

// WithLogger routes the semaphore's log lines (lost leases, cleanup
// retries) to l. By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.Logger = l }
}

// WithACL gives the nodes this Semaphore creates acl instead of the
// client's default ACL: its lease and mutex nodes and, when it creates
// them, their directories and the missing ancestors. A creator-only ACL
// (client.AuthACL(client.PermAll) with digest or x509 auth) keeps clients
// without the credentials from deleting a holder's node or joining. Every
// participant needs the credentials. Directories that exist keep their
// ACL.
func WithACL(acl ...client.ACL) Option {
	return func(c *config) { c.ACL = acl }
}

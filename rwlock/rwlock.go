package rwlock

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Lease is a held read or write lock; see recipes.Lease.
type Lease = recipes.Lease

var (
	// ErrLocked is returned by TryLock and TryRLock when the lock cannot
	// be taken without waiting.
	ErrLocked = recipes.ErrWouldBlock
	// ErrLost, ErrSuspended, ErrNodeDeleted and ErrReleased are package
	// recipes' sentinels, for matching a lease's Err without importing it:
	// ErrLost is matched by every reason a lease ended without Unlock (its
	// session lost, also matching client.ErrSessionLost or, after Close,
	// client.ErrClosed; ErrSuspended; ErrNodeDeleted), ErrReleased after
	// Unlock.
	ErrLost        = recipes.ErrLost
	ErrSuspended   = recipes.ErrSuspended
	ErrNodeDeleted = recipes.ErrNodeDeleted
	ErrReleased    = recipes.ErrReleased
	// ErrUpgrade is matched by the error (naming the call and the path)
	// of Lock and TryLock on an RWLock that holds a read lease: the writer
	// would wait for that reader, its own participant, forever. Unlock the
	// read lease first.
	ErrUpgrade = errors.New("zkit: rwlock: write lock requested while holding a read lease (no upgrade)")
	// ErrDowngrade is matched by the error (naming the call and the path)
	// of RLock and TryRLock on an RWLock that holds the write lock: the
	// reader would wait for that writer forever. Unlock the write lease
	// first.
	ErrDowngrade = errors.New("zkit: rwlock: read lock requested while holding the write lock (no downgrade)")
)

// The node shapes, as Curator's InterProcessReadWriteLock creates them.
var (
	readKind  = recipes.ReadKind
	writeKind = recipes.WriteKind
)

// RWLock is one participant in a read/write lock on a ZooKeeper path. It
// is safe for concurrent use; see the package documentation for what "one
// participant" means for upgrades and downgrades.
type RWLock struct {
	q   *recipes.Queue
	cfg config

	mu     sync.Mutex
	reads  map[*Lease]bool // held read leases
	writes map[*Lease]bool // held write leases
}

// New returns the read/write lock at path. It does no I/O; the path is
// checked when a lock is requested.
func New(c *client.Client, path string, opts ...Option) *RWLock {
	cfg := recipes.Apply(opts)
	return &RWLock{q: recipes.NewQueue(c, path, cfg.Logger, readKind, writeKind), cfg: cfg,
		reads: map[*Lease]bool{}, writes: map[*Lease]bool{}}
}

// Path is the lock's directory.
func (rw *RWLock) Path() string { return rw.q.Dir() }

// RLock waits until the read lock is held: no lower write node is left.
// Errors are as for lock.Lock; on every error the node is deleted.
func (rw *RWLock) RLock(ctx context.Context) (*Lease, error) { return rw.read(ctx, "read lock", false) }

// TryRLock takes the read lock if no writer holds it or waits ahead, and
// returns ErrLocked otherwise.
func (rw *RWLock) TryRLock(ctx context.Context) (*Lease, error) {
	return rw.read(ctx, "try read lock", true)
}

// Lock waits until the write lock is held: no lower node is left. It
// returns ErrUpgrade at once if this RWLock holds a read lease.
func (rw *RWLock) Lock(ctx context.Context) (*Lease, error) {
	return rw.write(ctx, "write lock", false)
}

// TryLock takes the write lock if no one else holds the lock or waits
// ahead, and returns ErrLocked otherwise (ErrUpgrade as for Lock).
func (rw *RWLock) TryLock(ctx context.Context) (*Lease, error) {
	return rw.write(ctx, "try write lock", true)
}

func (rw *RWLock) read(ctx context.Context, op string, try bool) (*Lease, error) {
	if rw.holds(rw.writes) {
		return nil, recipes.Wrap(op, rw.Path(), ErrDowngrade)
	}
	l, err := rw.acquire(ctx, op, readKind, try)
	if err != nil {
		return nil, recipes.Wrap(op, rw.Path(), err)
	}
	rw.track(rw.reads, l)
	return l, nil
}

func (rw *RWLock) write(ctx context.Context, op string, try bool) (*Lease, error) {
	if rw.holds(rw.reads) {
		return nil, recipes.Wrap(op, rw.Path(), ErrUpgrade)
	}
	l, err := rw.acquire(ctx, op, writeKind, try)
	if err != nil {
		return nil, recipes.Wrap(op, rw.Path(), err)
	}
	rw.track(rw.writes, l)
	return l, nil
}

// acquire takes a lease of kind, after refusing an invalid path, or the
// root, in an *client.InputError that names op, the call: before anything
// is sent.
func (rw *RWLock) acquire(ctx context.Context, op string, kind recipes.Kind, try bool) (*Lease, error) {
	if err := recipes.CheckDir(op, rw.Path(), "read/write lock"); err != nil {
		return nil, err
	}
	return rw.q.Acquire(ctx, rw.options(kind, try))
}

// holds reports whether a lease in set is still held.
func (rw *RWLock) holds(set map[*Lease]bool) bool {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	for l := range set {
		if l.Err() == nil {
			return true
		}
	}
	return false
}

// track keeps l in set until it ends.
func (rw *RWLock) track(set map[*Lease]bool, l *Lease) {
	rw.mu.Lock()
	set[l] = true
	rw.mu.Unlock()
	context.AfterFunc(l.Context(), func() {
		rw.mu.Lock()
		delete(set, l)
		rw.mu.Unlock()
	})
}

func (rw *RWLock) options(kind recipes.Kind, try bool) recipes.AcquireOptions {
	return recipes.AcquireOptions{Kind: kind, Data: rw.cfg.data, Try: try, Options: rw.cfg.Options}
}

// Option configures an RWLock.
type Option func(*config)

type config struct {
	recipes.Options
	data []byte
}

// WithSuspendTolerance keeps leases across a suspended connection for up
// to d before they count as lost (default 0: lost as soon as the
// connection is suspended). See lock.WithSuspendTolerance.
func WithSuspendTolerance(d time.Duration) Option {
	return func(c *config) { c.SuspendTolerance = d }
}

// WithData stores data in every node this RWLock creates.
func WithData(data []byte) Option {
	return func(c *config) { c.data = data }
}

// WithLogger routes the lock's log lines to l. By default nothing is
// logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.Logger = l }
}

// WithACL gives the nodes this RWLock creates acl instead of the client's
// default ACL: its members' nodes and, when it creates them, its directory
// and the directory's missing ancestors. See lock.WithACL for what a
// creator-only ACL protects; every contender needs the credentials.
func WithACL(acl ...client.ACL) Option {
	return func(c *config) { c.ACL = acl }
}

package lock

import (
	"context"
	"log/slog"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Lease is a held lock; see recipes.Lease for Done, Context, Err, Token,
// Guard, Multi and Unlock.
type Lease = recipes.Lease

var (
	// ErrLocked is returned by TryLock when another attempt holds or waits
	// for the lock ahead of it.
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
)

// kind is the mutex node shape: "_c_<uuid>-lock-<seq>", as Curator's
// InterProcessMutex creates it.
var kind = recipes.MutexKind

// Lock is an exclusive lock on a ZooKeeper path. It is safe for concurrent
// use, and every call to Lock or TryLock is a separate attempt: two
// goroutines sharing one Lock exclude each other like two processes do.
// A Lock is not reentrant.
type Lock struct {
	q    *recipes.Queue
	cfg  config
	comb *recipes.Combiner // WithCombining
	bad  error             // an invalid option, returned by Lock
}

// New returns the lock at path (a directory holding one node per attempt).
// It does no I/O; the path is checked by Lock and TryLock.
func New(c *client.Client, path string, opts ...Option) *Lock {
	cfg := recipes.Apply(opts)
	l := &Lock{q: recipes.NewQueue(c, path, cfg.Logger, kind), cfg: cfg}
	if cfg.combine != 0 {
		l.comb, l.bad = recipes.NewCombiner(l.q, cfg.combine)
	}
	return l
}

// Path is the lock's directory.
func (l *Lock) Path() string { return l.q.Dir() }

// Lock waits until the lock is held and returns the lease, or returns an
// error: ctx's error when ctx ends first, an *client.InputError for an
// invalid path or the root (nothing is sent), client.ErrClosed once the
// client is closed, an error matching ErrNodeDeleted when someone else
// deletes the attempt's node while it waits. Called while the client is
// between two sessions (just after one was lost), it waits within ctx for
// the next one. A session lost while it waits costs the attempt only its
// place in line: it queues again, at the back, under the next session,
// until ctx ends (its old node is deleted: see recipes.Ticket.Rejoin).
//
// On every error the attempt's node is deleted, at once or, when that is
// not possible, in the background for as long as the client lives.
//
// With WithCombining, goroutines calling Lock on the same Lock share one
// place in the queue (see WithCombining).
func (l *Lock) Lock(ctx context.Context) (*Lease, error) {
	if err := l.check("lock"); err != nil {
		return nil, err
	}
	var (
		lease *Lease
		err   error
	)
	switch {
	case l.bad != nil:
		err = l.bad
	case l.comb != nil:
		lease, err = l.comb.Acquire(ctx, l.options(false))
	default:
		lease, err = l.q.Acquire(ctx, l.options(false))
	}
	return lease, recipes.Wrap("lock", l.Path(), err)
}

// TryLock takes the lock if no other attempt holds it or waits ahead, and
// returns ErrLocked otherwise. It does not wait for other holders, only for
// the server's replies (ctx bounds those).
func (l *Lock) TryLock(ctx context.Context) (*Lease, error) {
	if err := l.check("try lock"); err != nil {
		return nil, err
	}
	lease, err := l.q.Acquire(ctx, l.options(true))
	return lease, recipes.Wrap("try lock", l.Path(), err)
}

// check refuses an invalid path, or the root, in an *client.InputError
// that names op, the call: before anything is sent.
func (l *Lock) check(op string) error { return recipes.CheckDir(op, l.Path(), "lock") }

func (l *Lock) options(try bool) recipes.AcquireOptions {
	return recipes.AcquireOptions{Kind: kind, Data: l.cfg.data, Try: try, Options: l.cfg.Options}
}

// Option configures a Lock.
type Option func(*config)

type config struct {
	recipes.Options
	data    []byte
	combine int
}

// WithCombining lets the goroutines that call Lock on this Lock share one
// place in the queue: while one holds the lock, the others wait behind it
// in the process, and Unlock hands the lock to the next of them without
// a round trip to the server. A node serves at most n holders (2 to
// 256) before it is released, so that other processes waiting for the
// lock get it after at most n critical sections of this one: under
// contention, this process's goroutines go first that many times, which
// is the fairness traded for throughput. Off by default, and with n = 0;
// any other n outside 2 to 256 makes Lock return an *client.InputError.
//
// Every holder has a lease of its own: its Token is higher than the
// previous holder's (recipes.TokenOf), its Multi is refused once it has
// unlocked, and it ends when the shared node is lost, like any lease.
// Guard alone does not fence against the next local holder, as the node
// outlives the hand-over: use Multi. TryLock does not combine: it fails
// while a local holder holds the lock, as it does for a remote one.
func WithCombining(n int) Option {
	return func(c *config) { c.combine = n }
}

// WithSuspendTolerance keeps a lease across a suspended connection for up
// to d before it counts as lost. The default, 0, ends the lease as soon as
// the connection is suspended: from then on the session may expire on the
// server at any moment and another process take the lock. With d > 0 the
// lease survives short network blips, but may be held for up to d after
// another process got the lock: fence your writes.
func WithSuspendTolerance(d time.Duration) Option {
	return func(c *config) { c.SuspendTolerance = d }
}

// WithData stores data in every lock node this Lock creates (Curator's
// lockNodeBytes), for example to say who holds it.
func WithData(data []byte) Option {
	return func(c *config) { c.data = data }
}

// WithLogger routes the lock's log lines (lost leases, cleanup retries)
// to l. By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.Logger = l }
}

// WithACL gives the nodes this Lock creates acl instead of the client's
// default ACL: its members' nodes and, when it creates them, its directory
// and the directory's missing ancestors (ZooKeeper checks the permission
// to delete a node on its parent). A creator-only ACL
// (client.AuthACL(client.PermAll) with digest or x509 auth) then keeps
// clients without the credentials from deleting or writing a holder's
// node, or joining: they get client.ErrNoAuth. Every contender needs the
// credentials. A directory that exists keeps its ACL; see
// recipes.Queue.Join.
func WithACL(acl ...client.ACL) Option {
	return func(c *config) { c.ACL = acl }
}

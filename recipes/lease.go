package recipes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipekit"
)

// Lease is a held node: a lock, a read or write lock, a leadership. It is
// held from the moment it is returned until Done is closed.
//
// Done is closed, and Context ends, when the lease may no longer be held:
//   - Unlock was called (cause ErrReleased);
//   - the session that owns the node was lost: expired, disconnected for
//     longer than the session timeout, or the client closed (cause matches
//     ErrLost and client.ErrSessionLost or client.ErrClosed);
//   - the connection stayed suspended for longer than the lease's suspend
//     tolerance (cause ErrSuspended); zkit then deletes the node as soon as
//     it can, so that the next waiter may go on;
//   - someone else deleted or wrote to the node (cause ErrNodeDeleted). A
//     lease that was first in line at once watches its node only from
//     10 ms after it was taken (its token came with the create's reply),
//     so it learns of such a delete or write up to that much later.
//
// Between the moment a lease is lost and the moment its owner sees Done,
// another process may already hold the same lock. Writes that must not
// happen then go through Multi (or carry Guard), so that ZooKeeper itself
// refuses them once the node is gone; writes to other systems carry Token
// and are refused there when a higher token has been seen.
type Lease struct {
	c      *client.Client
	sess   *client.Session
	path   string
	token  int64
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelCauseFunc
	plain  bool // release with a plain delete (LeaseOptions.PlainRelease)
	recipe string
	since  time.Time // held since
	batch  *batch    // the holders sharing the node, if a Combiner's
	once   sync.Once
	result error

	// The lease's own writes (Update), for a node whose waiters confirm
	// their turn (Kind.Confirmed): writeMu orders them; mu guards
	// version, the node's data version as the lease last wrote it, and
	// pending, the data of a write in flight or of unknown outcome (nil
	// when there is none).
	writable bool
	writeMu  sync.Mutex
	mu       sync.Mutex
	version  int32
	pending  []byte
}

// LeaseOptions configures how a Lease treats connection trouble.
type LeaseOptions struct {
	// SuspendTolerance is how long the connection may stay suspended before
	// the lease counts as lost. Zero (the default of zkit's locks) ends the
	// lease as soon as the connection is suspended: the session may expire
	// on the server at any moment after that, and another process take the
	// lock. A longer tolerance keeps the lease across short network blips,
	// at the risk of holding it for up to that long after it was lost.
	SuspendTolerance time.Duration
	// PlainRelease makes Unlock delete the node with a plain delete instead
	// of the release signal (see the package documentation). Recipes whose
	// layout other clients wait on with NodeDeleted-only watches set it:
	// Curator's LeaderLatch ignores the NodeDataChanged that the signal
	// fires, and would wait forever behind a zkit holder. zkit waiters
	// behind a plain release look at the queue again when they knew of
	// more than one lower node.
	PlainRelease bool
	Logger       *slog.Logger
	// Recipe names the recipe in telemetry; empty: the kind of the
	// ticket's node (see Kind.Recipe).
	Recipe string

	batch    *batch // the Combiner's batch whose first holder this is
	writable bool   // the node's waiters confirm their turn (Kind.Confirmed): Update may write it
}

func newLease(t *Ticket, opts LeaseOptions) *Lease {
	if opts.Recipe == "" {
		opts.Recipe = t.node.Kind.Recipe
	}
	opts.writable = t.node.Kind.Confirmed
	return hold(t.q.c, t.sess, t.path, t.token, t.self, opts)
}

// NewLease returns a held Lease on a node that a recipe of its own decided
// is held without a Queue (a counting semaphore's lease, say): the
// ephemeral node path, owned by sess, whose Stat st and one-shot watch self
// the recipe read with client.GetW after creating it. The token is
// TokenOf(st.Czxid). From then on it is a Lease like any other: the watch ends it
// when the node is deleted or written, the session's loss and a suspension
// beyond o.SuspendTolerance end it too.
//
// The caller checks that sess owns the node (st.EphemeralOwner) before
// calling: a Lease on a node of another session would be held by no one.
func NewLease(c *client.Client, sess *client.Session, path string, st *client.Stat, self <-chan client.WatchEvent, o LeaseOptions) *Lease {
	return hold(c, sess, path, st.Czxid, self, o)
}

func hold(c *client.Client, sess *client.Session, path string, czxid int64, self <-chan client.WatchEvent, opts LeaseOptions) *Lease {
	ctx, cancel := context.WithCancelCause(context.Background())
	l := &Lease{c: c, sess: sess, path: path, token: TokenOf(czxid),
		log: recipekit.Logger(opts.Logger), ctx: ctx, cancel: cancel, plain: opts.PlainRelease,
		recipe: opts.Recipe, since: time.Now(), batch: opts.batch, writable: opts.writable}
	if b := l.batch; b != nil {
		b.first(l)
	}
	go l.monitor(self, &tolerance{c: l.c, limit: opts.SuspendTolerance})
	return l
}

// node is the context of the lease's node: the lease's own, or its
// batch's, which ends when the last of the holders sharing the node
// releases it or the node is lost.
func (l *Lease) node() context.Context {
	if l.batch != nil {
		return l.batch.ctx
	}
	return l.ctx
}

// Node is the full path of the lease's node.
func (l *Lease) Node() string { return l.path }

// Token is the fencing token: TokenOf the czxid of the lease's node, plus
// the lease's place among the holders a Combiner handed that node to
// (0 for its first holder). Tokens of successive holders of the same lock
// strictly increase, across sessions, processes and restarts of the
// ensemble.
func (l *Lease) Token() int64 { return l.token }

// TokenOf is the fencing token of the first holder of a node created at
// czxid: czxid × MaxHolders. The holders a Combiner hands the node to
// within one process take the next ones (+1, +2, ..., fewer than
// MaxHolders in all), so a node queued later, with a higher czxid, has a
// token above every holder of the nodes before it. ZooKeeper's zxids are
// the epoch (the number of leader elections) times 2^32 plus a counter:
// the product fits an int64 up to 2^23 elections.
func TokenOf(czxid int64) int64 { return czxid * MaxHolders }

// MaxHolders bounds how many holders share one lease node: its first and
// those a Combiner hands it to.
const MaxHolders = 256

// Session is the session that owns the lease's node.
func (l *Lease) Session() *client.Session { return l.sess }

// Done is closed when the lease ends; Context tells why.
func (l *Lease) Done() <-chan struct{} { return l.ctx.Done() }

// Context ends when the lease ends. context.Cause gives the reason:
// ErrReleased after Unlock, otherwise an error matching ErrLost.
func (l *Lease) Context() context.Context { return l.ctx }

// Err is nil while the lease is held, then the reason it ended.
func (l *Lease) Err() error { return context.Cause(l.ctx) }

// Guard returns an op that makes a client.Multi fail unless the lease's node
// still exists: put it in a Multi with the writes that must only happen
// while the lease is held. A node a Combiner hands on outlives each
// holder's release: Guard fences those holders against other processes
// only, and Multi against the next holder of the process too.
func (l *Lease) Guard() client.Op { return client.CheckOp(l.path, -1) }

// Multi applies ops atomically, and only while the lease is held: it
// prepends Guard and returns the results of ops. When the lease has ended,
// or the guard fails on the server, nothing is applied and the error
// matches ErrReleased after Unlock, ErrLost otherwise.
func (l *Lease) Multi(ctx context.Context, ops ...client.Op) ([]client.OpResult, error) {
	if b := l.batch; b != nil {
		// The node does not pass to the next local holder while this
		// runs, and this does not run once it has.
		b.fence.RLock()
		defer b.fence.RUnlock()
	}
	return guarded(ctx, l.c, l.path, l.ctx, l.Guard(), ops)
}

// guarded applies ops behind guard while held (a lease's or a presence's
// context) has not ended.
func guarded(ctx context.Context, c *client.Client, path string, held context.Context, guard client.Op, ops []client.Op) ([]client.OpResult, error) {
	if err := held.Err(); err != nil {
		return nil, Wrap("multi", path, context.Cause(held))
	}
	res, err := c.Multi(ctx, append([]client.Op{guard}, ops...)...)
	var me *client.MultiError
	if errors.As(err, &me) && me.Index == 0 {
		return nil, Wrap("multi", path, fmt.Errorf("%w (%w)", ErrNodeDeleted, err))
	}
	if len(res) > 0 {
		res = res[1:]
	}
	return res, err
}

// Unlock releases the lease: Done is closed at once, then the node is
// deleted (with the release signal, unless LeaseOptions.PlainRelease). It waits for the delete while ctx allows (retrying while the
// connection is down); if ctx ends first, the delete goes on in the
// background for as long as the client lives, and Unlock returns ctx's
// error.
//
// Unlock returns nil when the lease was held until Unlock was called. If
// it had already been lost, Unlock still cleans up and returns the reason
// (matching ErrLost): the critical section may not have been exclusive.
// Calling Unlock again returns the same result.
func (l *Lease) Unlock(ctx context.Context) error {
	l.once.Do(func() { _, l.result = l.unlock(ctx, nil) })
	return l.result
}

// UnlockAll releases leases all at once, each as its Unlock does (Done
// closed at once, the node deleted while ctx allows, otherwise in the
// background for as long as the client lives), and waits for them all: one
// that fails does not keep the others from being released. It returns nil
// when every lease was held until UnlockAll was called; otherwise the
// errors of those that were not, or whose delete ctx cut short, each
// naming its node, joined with errors.Join (errors.Is(err, ErrLost) tells
// that one had been lost). Calling it again returns the same errors.
func UnlockAll(ctx context.Context, leases ...*Lease) error {
	errs := make([]error, len(leases))
	var wg sync.WaitGroup
	for i, l := range leases {
		wg.Go(func() { errs[i] = l.Unlock(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// unlock is Unlock's work, done once. With join set, a lease held until
// now, not shared and released with a plain delete is released by join
// instead: join sends its next create in one transaction with del, the
// delete of the lease's node (client.WithOps). unlock reports whether
// join ran; if it failed, the node is removed as Unlock removes it.
func (l *Lease) unlock(ctx context.Context, join func(del client.Op) error) (joined bool, err error) {
	if b := l.batch; b != nil && b.handOver(l) {
		return false, nil
	}
	var lost error
	switch {
	case l.ctx.Err() != nil:
		lost = context.Cause(l.ctx)
	case !l.sess.Alive():
		// Lost (or the client closed) before the monitor noticed.
		lost = LostSession(l.c, l.sess.Err())
		l.lose(lost, false)
	}
	l.cancel(ErrReleased)
	if context.Cause(l.ctx) == ErrReleased { // not lost in the meantime
		recipekit.InstrumentsOf(l.c).Ended(l.recipe, l.since, endOf(ErrReleased))
	}
	if b := l.batch; b != nil {
		b.end(ErrReleased) // the node's monitor stops
	}
	if join != nil && lost == nil && l.batch == nil && l.plain {
		joined = true
		if join(client.DeleteOp(l.path, -1)) == nil {
			return true, nil
		}
	}
	// The release signal would still be true after a loss (the node did
	// hold), but a plain delete is the conservative choice.
	signal := lost == nil && !l.plain
	if err := Remove(ctx, l.c, l.sess, l.path, Removal{Signal: signal, Logger: l.log}); err != nil {
		return joined, fmt.Errorf("zkit: unlock %s: %w", l.path, err)
	}
	if lost != nil {
		return joined, fmt.Errorf("zkit: unlock %s: %w", l.path, lost)
	}
	return joined, nil
}

// requeue releases the lease as Unlock does, through join when it can
// (see unlock), and reports whether join ran. When it did not, the lease
// has been released (or was already) without it.
func (l *Lease) requeue(ctx context.Context, join func(del client.Op) error) (joined bool) {
	l.once.Do(func() { joined, l.result = l.unlock(ctx, join) })
	return joined
}

// selfWatchDelay is how long a lease taken without a watch on its own
// node (first in line at once: see Ticket.start) is held before it sets
// one. A lock held for less costs no request beyond create, list and
// release; one held longer learns of a foreign delete or write of its node
// at most this much later than a watched one would.
const selfWatchDelay = 10 * time.Millisecond

// monitor ends the lease when its session is lost, its node changes, or
// the connection stays suspended beyond tolerance. Without a watch on the
// node (self nil), it sets one after selfWatchDelay.
func (l *Lease) monitor(self <-chan client.WatchEvent, t *tolerance) {
	defer t.stop()
	var arm <-chan time.Time
	if self == nil {
		timer := time.NewTimer(selfWatchDelay)
		defer timer.Stop()
		arm = timer.C
	}
	var b client.Backoff
	for {
		changed, expired, over, _ := t.check()
		if over {
			l.lose(ErrSuspended, true)
			return
		}
		select {
		case <-changed:
		case <-expired:
			l.lose(ErrSuspended, true)
			return
		case <-l.sess.Done():
			l.lose(LostSession(l.c, l.sess.Err()), true) // the server may still have it: see Remove
			return
		case <-arm:
			ch, retry, cause := l.watchSelf()
			switch {
			case cause != nil:
				l.lose(cause, true)
				return
			case retry:
				arm = time.After(b.Next())
			default:
				self, arm = ch, nil
			}
		case ev := <-self:
			switch {
			case ev.Type == client.EventNotWatching:
				l.lose(LostSession(l.c, ev.Err), true)
			case ev.Type == client.EventNodeDataChanged && l.writable:
				// Written: by Update, or by someone else. The node read
				// back tells (watchSelf), and the watch is set again.
				self, arm = nil, time.After(0)
				continue
			default:
				// Deleted, or written (which tells the next waiter that
				// this node was released): either way it is not held.
				l.lose(ErrNodeDeleted, ev.Type != client.EventNodeDeleted)
			}
			return
		case <-l.node().Done():
			return
		}
	}
}

// watchSelf sets the watch on the lease's node: the cause of the lease's
// end if the node is gone or was written meanwhile by anyone but the
// lease (Update), retry if the connection is down.
func (l *Lease) watchSelf() (ch <-chan client.WatchEvent, retry bool, cause error) {
	data, st, ch, err := l.c.GetW(l.node(), l.path)
	switch {
	case errors.Is(err, client.ErrNoNode):
		return nil, false, ErrNodeDeleted
	case err != nil:
		return nil, true, nil // the session's loss, if that is it, ends the lease
	case st.EphemeralOwner != l.sess.ID() || !l.wrote(data, st):
		return nil, false, ErrNodeDeleted // written: released by someone else
	}
	return ch, false, nil
}

// lose ends the lease with cause, unless it has already ended; with remove
// set it deletes the node, which may still exist.
func (l *Lease) lose(cause error, remove bool) {
	if b := l.batch; b != nil {
		l = b.lost(cause) // the node's holder now
	}
	if l.ctx.Err() != nil {
		return
	}
	cause = lossCause(l.c, cause)
	l.cancel(cause)
	if context.Cause(l.ctx) != cause {
		return // released or lost in the meantime
	}
	recipekit.InstrumentsOf(l.c).Ended(l.recipe, l.since, endOf(cause))
	l.log.Warn("zkit: lease lost", "node", l.path, "cause", cause)
	if remove {
		Remove(done, l.c, l.sess, l.path, Removal{Logger: l.log})
	}
}

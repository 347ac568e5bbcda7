package recipes

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipekit"
)

// Combiner lets the goroutines of one process that take turns in the same
// queue on the same client share one place in it: lock combining. The
// first caller joins the queue as Acquire does; callers that come while
// its node is queued or held wait behind it in the process, and when a
// holder unlocks, the node passes to the next of them without a request
// to the server. The node is released once nobody waits behind it
// locally, or once it has served max holders, so that other processes
// queued behind it get their turn after at most max critical sections:
// that bound is the fairness given up for throughput.
//
// Each holder gets a Lease of its own, with the same guarantees as one
// that owns its node:
//   - its Token is TokenOf the node's czxid plus its place among the
//     node's holders, so tokens keep strictly increasing from one holder
//     to the next, local or not;
//   - its Multi is refused once it has unlocked: the node does not pass
//     on while a Multi of the holder runs, and a Multi checks the lease
//     first. Guard alone (an op in a Multi of the caller's own) fences
//     against other processes only, since the node outlives the local
//     hand-over;
//   - when the node is lost (its session, a foreign delete, a suspension
//     beyond the tolerance), the holder's lease ends, and the callers
//     waiting behind it queue again with a node of their own.
//
// A Combiner is safe for concurrent use.
type Combiner struct {
	q   *Queue
	max int

	mu   sync.Mutex
	open *batch // the newest batch: callers join it while it has room
}

// NewCombiner returns a Combiner over q whose nodes each serve at most max
// holders (2 to MaxHolders); it does no I/O.
func NewCombiner(q *Queue, max int) (*Combiner, error) {
	if max < 2 || max > MaxHolders {
		return nil, &client.InputError{Op: "combine", Path: q.dir,
			Reason: fmt.Sprintf("%d holders a node: want 2 to %d", max, MaxHolders)}
	}
	return &Combiner{q: q, max: max}, nil
}

// batch is one node of the queue and the local holders it serves in turn.
type batch struct {
	cb    *Combiner
	fence sync.RWMutex // held for writing while the node passes on; a Multi holds it for reading
	ctx   context.Context
	end   context.CancelCauseFunc

	// Guarded by cb.mu.
	cur     *Lease // the holder, once the node is held
	waiters []waiter
	holders int  // served and waiting, the first included
	closed  bool // takes nobody more: released, lost, or never held
}

type waiter struct {
	ch     chan *Lease // the lease, or nil: queue again
	joined time.Time
}

// Acquire waits for a turn and returns the held lease, like
// Queue.Acquire; o.Try is not supported (Queue.Acquire with Try ignores
// local holders, as it should: they hold the lock). It returns ctx's error
// when ctx ends first, leaving the node to the others.
func (cb *Combiner) Acquire(ctx context.Context, o AcquireOptions) (*Lease, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cb.mu.Lock()
		if b := cb.open; b != nil && !b.closed && b.holders < cb.max {
			w := waiter{ch: make(chan *Lease, 1), joined: time.Now()}
			b.waiters = append(b.waiters, w)
			b.holders++
			cb.mu.Unlock()
			l, err := b.await(ctx, w)
			if l == nil && err == nil {
				continue // the node went before this turn came: queue again
			}
			return l, err
		}
		b := &batch{cb: cb, holders: 1}
		b.ctx, b.end = context.WithCancelCause(context.Background())
		cb.open = b
		cb.mu.Unlock()
		l, err := cb.q.acquire(ctx, o, b)
		if err != nil {
			b.lost(err)
			return nil, err
		}
		return l, nil
	}
}

// first makes l, the holder of the node, the batch's first holder.
func (b *batch) first(l *Lease) {
	b.cb.mu.Lock()
	defer b.cb.mu.Unlock()
	b.cur = l
}

// await waits for the turn of w.
func (b *batch) await(ctx context.Context, w waiter) (*Lease, error) {
	select {
	case l := <-w.ch:
		return l, nil
	case <-ctx.Done():
	}
	b.cb.mu.Lock()
	i := slices.IndexFunc(b.waiters, func(o waiter) bool { return o.ch == w.ch })
	if i >= 0 {
		b.waiters = slices.Delete(b.waiters, i, i+1)
		b.holders--
	}
	b.cb.mu.Unlock()
	if i < 0 {
		// Handed the lease at the same moment: pass it on.
		if l := <-w.ch; l != nil {
			l.Unlock(done)
		}
	}
	return nil, ctx.Err()
}

// handOver passes the node from l, which unlocks, to the next local
// waiter, if one waits and l still holds: l ends (ErrReleased) once no
// Multi of its runs, and the node stays. Otherwise it closes the batch
// and reports false: Unlock releases the node.
func (b *batch) handOver(l *Lease) bool {
	b.fence.Lock()
	defer b.fence.Unlock()
	b.cb.mu.Lock()
	if b.closed || b.cur != l || l.ctx.Err() != nil || !l.sess.Alive() || len(b.waiters) == 0 {
		retry := b.close()
		b.cb.mu.Unlock()
		requeue(retry)
		return false
	}
	w := b.waiters[0]
	b.waiters = b.waiters[1:]
	next := l.successor()
	b.cur = next
	b.cb.mu.Unlock()
	l.cancel(ErrReleased)
	in := recipekit.InstrumentsOf(l.c)
	in.Ended(l.recipe, l.since, endOf(ErrReleased))
	in.Acquired(l.recipe, w.joined, time.Time{})
	w.ch <- next
	return true
}

// lost closes the batch and ends its node's context with cause; the
// callers waiting in it queue again. It returns the holder, if any.
func (b *batch) lost(cause error) *Lease {
	b.cb.mu.Lock()
	cur, retry := b.cur, b.close()
	b.cb.mu.Unlock()
	b.end(cause)
	requeue(retry)
	return cur
}

// close marks the batch closed and returns its waiters; cb.mu is held.
func (b *batch) close() []waiter {
	b.closed = true
	if b.cb.open == b {
		b.cb.open = nil
	}
	retry := b.waiters
	b.waiters = nil
	return retry
}

func requeue(ws []waiter) {
	for _, w := range ws {
		w.ch <- nil
	}
}

// successor is the lease of the next local holder of l's node.
func (l *Lease) successor() *Lease {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Lease{c: l.c, sess: l.sess, path: l.path, token: l.token + 1, log: l.log, ctx: ctx, cancel: cancel,
		plain: l.plain, recipe: l.recipe, since: time.Now(), batch: l.batch}
}

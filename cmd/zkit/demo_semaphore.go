package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/semaphore"
)

// semaphoreContention: workers contend for a semaphore of half as many
// leases. Each holder puts a marker node in a shared directory with a
// write fenced by its lease and counts the markers there: neither that
// count nor the holders counted in-process ever exceed the maximum.
//
// The holders keep the semaphore full: each keeps its lease until a
// waiter has been refused one while its lease node was there (the
// semaphore full with it inside), or until every worker still running
// holds one (nobody is left to refuse). At each refusal the step lists
// the leases directory: no more lease nodes than the maximum. So a
// semaphore that lets in one holder too many is caught every time, not
// only when the workers happen to crowd in: its first refusal comes with
// a lease node too many, and without a refusal every worker ends up
// holding at once.
func semaphoreContention(ctx context.Context, d *demoEnv) (string, error) {
	return semaphoreRun(ctx, d, semaphore.New)
}

// semaphoreRun is semaphoreContention on the semaphores newSem returns
// (semaphore.New; a test's may be broken on purpose).
func semaphoreRun(ctx context.Context, d *demoEnv, newSem func(c *client.Client, path string, max int, opts ...semaphore.Option) *semaphore.Semaphore) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers)
	if err != nil {
		return "", err
	}
	defer closeAll()
	n := max(1, d.workers/2)
	path, inside := d.path("semaphore"), d.path("semaphore-holders")
	if err := cs[0].EnsurePath(ctx, inside); err != nil {
		return "", err
	}
	h := newSemHolders(n, len(cs))
	d.startClock()
	errc := make(chan error, len(cs))
	for _, c := range cs {
		sem := newSem(c, path, n, semaphore.WithLogger(slog.New(&refusalLog{ctx: ctx, c: c, leases: path + "/leases", h: h})))
		go func() {
			err := semaphoreWorker(ctx, d, c, sem, inside, h)
			h.finished()
			errc <- err
		}()
	}
	for range cs {
		if err := <-errc; err != nil {
			return "", err
		}
	}
	elapsed := d.stopClock()
	if err := h.err(); err != nil {
		return "", err
	}
	for _, dir := range []string{path + "/leases", path + "/locks", inside} {
		if kids, _, err := cs[0].Children(ctx, dir); err != nil || len(kids) != 0 {
			return "", violationf("nodes left behind in %s: %v (%v)", dir, kids, err)
		}
	}
	if h.refusals == 0 {
		// More workers than leases: the first n hold until the next is
		// refused, so none means the step checked nothing.
		return "", violationf("the semaphore was never full: no waiter was refused a lease")
	}
	total := d.workers * d.rounds
	return fmt.Sprintf("%d leases, %.0f/s, full %d times (a waiter refused), at most %d of %d held at once", total,
		float64(total)/elapsed.Seconds(), h.refusals, h.most, n), nil
}

func semaphoreWorker(ctx context.Context, d *demoEnv, c *client.Client, sem *semaphore.Semaphore, inside string, h *semHolders) error {
	for range d.rounds {
		lease, err := sem.Acquire(ctx)
		if err != nil {
			return err
		}
		d.count(1)
		h.enter()
		res, err := lease.Multi(ctx, client.CreateOp(inside+"/h-", nil, client.EphemeralSequential))
		if err == nil {
			var kids []string
			if kids, _, err = c.Children(ctx, inside); err == nil {
				h.saw(len(kids), "marker nodes at once")
				if err = h.holdOn(ctx, lease.Node()); err == nil {
					err = c.Delete(ctx, res[0].Path, -1)
				}
			}
		}
		h.leave()
		if uerr := lease.Unlock(ctx); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// semHoldLimit bounds how long a holder waits for a refusal: the
// semaphore fills and refuses the next waiter within a few round trips,
// so a holder still waiting after this long means the step's signal of a
// refusal (the semaphore's log line) no longer comes.
const semHoldLimit = 10 * time.Second

// semHolders counts the holders of a semaphore, in-process and as the
// holders' marker nodes and the refusals' listings showed them, and
// tells the holders when they may leave.
type semHolders struct {
	mu         sync.Mutex
	max        int
	inside     int             // holders, in-process
	running    int             // workers with rounds left
	refusals   int             // waiters refused a lease so far
	full       map[string]bool // the lease nodes a refusal's listing showed
	changed    chan struct{}   // closed and replaced when inside, running or full change
	most       int
	violations []string
	listErr    error // the first listing at a refusal that failed
}

func newSemHolders(max, workers int) *semHolders {
	return &semHolders{max: max, running: workers, full: make(map[string]bool), changed: make(chan struct{})}
}

// broadcast wakes the holders waiting in holdOn; h.mu is held.
func (h *semHolders) broadcast() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// enter counts a holder in.
func (h *semHolders) enter() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inside++
	h.saw0(h.inside, "holders at once")
	h.broadcast()
}

func (h *semHolders) leave() {
	h.mu.Lock()
	h.inside--
	h.mu.Unlock()
}

// finished counts a worker out: it has no rounds left.
func (h *semHolders) finished() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running--
	h.broadcast()
}

// holdOn waits until the holder of the lease node at node may leave: a
// waiter was refused while the node was there (the semaphore full with
// the holder inside; the refusal may have come before the holder's
// Acquire returned), or every worker still running holds a lease.
func (h *semHolders) holdOn(ctx context.Context, node string) error {
	_, name := client.SplitPath(node)
	limit := time.NewTimer(semHoldLimit)
	defer limit.Stop()
	for {
		h.mu.Lock()
		done, changed := h.full[name] || h.inside >= h.running, h.changed
		inside, running := h.inside, h.running
		h.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-limit.C:
			return fmt.Errorf("a holder waited %v for a waiter to be refused a lease (%d of %d workers holding, max %d): the semaphore's log no longer reports refusals (%q)",
				semHoldLimit, inside, running, h.max, semRefusalMsg)
		}
	}
}

// refused records a waiter refused a lease, whose listing of the leases
// directory (made after the refusal, before any holder may leave because
// of it) showed the lease nodes leases or failed with err, and lets their
// holders go.
func (h *semHolders) refused(leases []string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil && h.listErr == nil {
		h.listErr = fmt.Errorf("listing the leases at a refusal: %w", err)
	}
	h.saw0(len(leases), "lease nodes when a waiter was refused")
	for _, name := range leases {
		h.full[name] = true
	}
	h.refusals++
	h.broadcast()
}

// saw records a count of holders seen at the server.
func (h *semHolders) saw(n int, what string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.saw0(n, what)
}

func (h *semHolders) saw0(n int, what string) {
	h.most = max(h.most, n)
	if n > h.max {
		h.violations = append(h.violations, fmt.Sprintf("%s: %d, max %d", what, n, h.max))
	}
}

func (h *semHolders) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.violations) == 0 {
		return h.listErr
	}
	return violationf("%d violations, first: %s", len(h.violations), h.violations[0])
}

// semRefusalMsg is the semaphore's debug line when a waiter, holding the
// semaphore's mutex, finds no lease free and waits for one.
const semRefusalMsg = "zkit: semaphore: holding its mutex, waiting for a lease"

// refusalLog is a semaphore's log handler that, at each refusal, lists
// the leases directory with c and records it in h. It runs in the refused
// waiter, which holds the mutex: no lease node is created meanwhile (by a
// semaphore that keeps its contract), and
// no holder leaves because of this refusal before it is recorded.
type refusalLog struct {
	ctx    context.Context
	c      *client.Client
	leases string
	h      *semHolders
}

func (l *refusalLog) Enabled(context.Context, slog.Level) bool { return true }

func (l *refusalLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != semRefusalMsg {
		return nil
	}
	kids, _, err := l.c.Children(l.ctx, l.leases)
	l.h.refused(kids, err)
	return nil
}

func (l *refusalLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *refusalLog) WithGroup(string) slog.Handler      { return l }

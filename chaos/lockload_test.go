package chaos

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/zktest"
)

// workload is one recipe kept busy by its workers while a scenario
// injects faults. Run returns when ctx ends; Check then checks what was
// recorded.
type workload interface {
	Name() string
	Run(ctx context.Context)
	Check(t *testing.T) (ops, violations int, held string)
}

// runWorkloads runs ws until stop is closed, and waits for them.
func runWorkloads(ctx context.Context, ws []workload) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() { w.Run(ctx) })
	}
	return func() { cancel(); wg.Wait() }
}

// checkWorkloads checks every workload and adds its figures to sum.
func checkWorkloads(t *testing.T, ws []workload, sum *Summary) {
	t.Helper()
	for _, w := range ws {
		ops, bad, held := w.Check(t)
		sum.Recipes = append(sum.Recipes, w.Name())
		sum.Ops += ops
		sum.Violations += bad
		if held != "" {
			if sum.Held != "" {
				sum.Held += "; "
			}
			sum.Held += held
		}
	}
}

// checkTimeout bounds each porcupine check.
var checkTimeout = zktest.Scale(2 * time.Minute)

// checkHistory checks h against model and returns the number of
// violations it shows: 0 or 1 (a history is linearizable or not).
func checkHistory(t *testing.T, name string, h *History, model porcupine.Model) int {
	t.Helper()
	ops := h.Operations()
	res, info := porcupine.CheckOperationsVerbose(model, ops, checkTimeout)
	switch res {
	case porcupine.Ok:
		return 0
	case porcupine.Unknown:
		t.Errorf("%s: porcupine could not decide within %v on %d operations", name, checkTimeout, len(ops))
		return 1
	}
	path := fmt.Sprintf("%s/%s-history.html", t.TempDir(), name)
	if err := porcupine.VisualizePath(model, info, path); err == nil {
		t.Logf("%s: the history is not linearizable; visualization in %s", name, path)
	}
	t.Errorf("%s: history of %d operations is not linearizable", name, len(ops))
	return 1
}

// lockLoad keeps a lock (or a read/write lock) busy: each worker takes it
// in a loop, writes while holding it to a Fence and (guarded by the lease)
// to ZooKeeper, and releases it. Every acquire, release, loss and write
// goes to a history checked against LockModel.
type lockLoad struct {
	name    string // "lock" or "rwlock"
	dir     string // the lock's path
	data    string // the node the guarded writes change
	workers []*worker
	readers int // rwlock: workers [0, readers) take the read lock
	// acquire takes the lock; the default is the recipe's (lock.Lock,
	// rwlock.RLock or rwlock.Lock).
	acquire func(ctx context.Context, w *worker, shared bool) (*recipes.Lease, error)
	hold    time.Duration

	h     *History
	fence *Fence
	prog  *Progress

	acquired, lost, released, refused, failed atomic.Int64
}

// newLockLoad prepares a lock workload on workers; prog (shared by the
// scenario's workloads) records its progress.
func newLockLoad(t *testing.T, admin *client.Client, name string, workers []*worker, readers int, h *History, prog *Progress) *lockLoad {
	t.Helper()
	base := zktest.UniquePath(t) + "/" + name
	ctx := testContext(t, 30*time.Second)
	if err := admin.EnsurePath(ctx, base); err != nil {
		t.Fatal(err)
	}
	data := base + "/data"
	if _, err := admin.Create(ctx, data, nil, client.Persistent); err != nil {
		t.Fatal(err)
	}
	prog.Track(name)
	l := &lockLoad{name: name, dir: base + "/lock", data: data, workers: workers, readers: readers,
		hold: 2 * time.Millisecond, h: h, fence: NewFence(), prog: prog}
	l.acquire = l.recipe
	return l
}

func (l *lockLoad) Name() string { return l.name }

func (l *lockLoad) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i, w := range l.workers {
		wg.Go(func() { l.work(ctx, w, i < l.readers) })
	}
	wg.Wait()
}

func (l *lockLoad) recipe(ctx context.Context, w *worker, shared bool) (*recipes.Lease, error) {
	if l.name == "lock" {
		return lock.New(w.c, l.dir).Lock(ctx)
	}
	rw := rwlock.New(w.c, l.dir)
	if shared {
		return rw.RLock(ctx)
	}
	return rw.Lock(ctx)
}

func (l *lockLoad) work(ctx context.Context, w *worker, shared bool) {
	var b recipes.Backoff
	for ctx.Err() == nil {
		call := l.h.Invoke(w.id, LockInput{Op: Acquire, Shared: shared})
		lease, err := l.acquire(ctx, w, shared)
		if err != nil {
			// Not held: nothing to record. (The attempt's node, if any,
			// is deleted by the recipe.)
			if ctx.Err() == nil {
				l.failed.Add(1)
				b.Wait(ctx)
			}
			continue
		}
		b.Reset()
		call.Return(LockOutput{Token: lease.Token()})
		l.acquired.Add(1)
		l.prog.Done(l.name)
		l.holdAndRelease(ctx, w, lease, shared)
	}
}

// holdAndRelease is the critical section: fenced writes while the lease
// holds, then the release, or the loss as the worker saw it.
func (l *lockLoad) holdAndRelease(ctx context.Context, w *worker, lease *recipes.Lease, shared bool) {
	held := l.h.Now()
	token := lease.Token()
	lostAt := make(chan int64, 1)
	context.AfterFunc(lease.Context(), func() {
		if !errors.Is(context.Cause(lease.Context()), recipes.ErrReleased) {
			lostAt <- l.h.Now()
		}
	})
	for range 2 {
		l.write(ctx, w, lease, shared)
		time.Sleep(l.hold)
	}
	// Release with a context of its own: the workload's may have ended.
	rctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(10*time.Second))
	defer cancel()
	call := l.h.Invoke(w.id, LockInput{Op: Release, Token: token})
	err := lease.Unlock(rctx)
	switch {
	case err == nil:
		call.Return(LockOutput{})
		l.released.Add(1)
	case errors.Is(err, recipes.ErrLost):
		// Lost before the release: it ended when the worker saw it end.
		l.h.Record(w.id, LockInput{Op: Release, Token: token}, LockOutput{}, held, <-lostAt)
		l.lost.Add(1)
	default:
		call.Unknown(LockOutput{}) // the delete goes on in the background
		l.lost.Add(1)
	}
}

// write writes to the fence (exclusive holders only: readers' tokens are
// not ordered among themselves) and to ZooKeeper, guarded by the lease.
// Each write is invoked before the lease is checked, so that a write seen
// to succeed starts before any loss of the lease is recorded.
func (l *lockLoad) write(ctx context.Context, w *worker, lease *recipes.Lease, shared bool) {
	token := lease.Token()
	if !shared {
		call := l.h.Invoke(w.id, LockInput{Op: Write, Token: token})
		if lease.Err() != nil {
			return
		}
		call.Return(LockOutput{OK: l.fence.Write(token)})
	}
	op := client.SetOp(l.data, binary.BigEndian.AppendUint64(nil, uint64(token)), -1)
	if shared {
		op = client.CheckOp(l.data, -1)
	}
	call := l.h.Invoke(w.id, LockInput{Op: Write, Token: token})
	_, err := lease.Multi(ctx, op)
	switch {
	case err == nil:
		call.Return(LockOutput{OK: true})
	case errors.Is(err, recipes.ErrLost):
		call.Return(LockOutput{OK: false})
		l.refused.Add(1)
	}
	// Other outcomes (unknown, connection loss) constrain nothing.
}

func (l *lockLoad) Check(t *testing.T) (ops, violations int, held string) {
	t.Helper()
	violations = checkHistory(t, l.name, l.h, LockModel)
	if r := l.fence.Refused(); r > 0 {
		// Every exclusive holder checks its lease before writing; a
		// refusal means it wrote after another holder had.
		t.Errorf("%s: the fence refused %d writes of live holders", l.name, r)
		violations += r
	}
	held = fmt.Sprintf("%s: %d held, %d released, %d lost, %d sessions lost, linearizable",
		l.name, l.acquired.Load(), l.released.Load(), l.lost.Load(), sessionsLost(l.workers...))
	return l.h.Len(), violations, held
}

// lockLoads returns the lock and rwlock workloads, each on its own
// workers (sessions), sharing prog. Each has its own history.
func lockLoads(t *testing.T, e *env, admin *client.Client, prog *Progress, workers int, timeout time.Duration, opts ...client.Option) []workload {
	var ws []*worker
	for i := range workers {
		ws = append(ws, e.worker(t, i, timeout, opts...))
	}
	var rws []*worker
	for i := range workers {
		rws = append(rws, e.worker(t, i, timeout, opts...))
	}
	return []workload{
		newLockLoad(t, admin, "lock", ws, 0, NewHistory(), prog),
		newLockLoad(t, admin, "rwlock", rws, workers/2, NewHistory(), prog),
	}
}

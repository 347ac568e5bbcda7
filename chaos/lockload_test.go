package chaos

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// workload is one recipe kept busy by its workers while a scenario
// injects faults. Run returns when ctx ends; Check then checks what was
// recorded.
type workload interface {
	Name() string
	Workers() []*worker // the clients it runs on
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

// loadPath creates the directory of the workload name, unique to the test,
// and has prog track its progress.
func loadPath(t *testing.T, admin *client.Client, name string, prog *Progress) string {
	t.Helper()
	path := zktest.UniquePath(t) + "/" + name
	if err := admin.EnsurePath(testContext(t, 30*time.Second), path); err != nil {
		t.Fatal(err)
	}
	prog.Track(name)
	return path
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
	// Outside the test's temporary directory, which goes with the test.
	if f, err := os.CreateTemp("", "chaos-"+name+"-history-*.html"); err == nil {
		f.Close()
		if err := porcupine.VisualizePath(model, info, f.Name()); err == nil {
			t.Logf("%s: the history is not linearizable; visualization in %s", name, f.Name())
		}
	}
	t.Errorf("%s: history of %d operations is not linearizable", name, len(ops))
	return 1
}

// lease is what a lock workload holds: a lock's or a read/write lock's
// *recipes.Lease, or an election's term (termLease).
type lease interface {
	Node() string
	Token() int64
	Done() <-chan struct{}
	Context() context.Context
	Err() error
	Guard() client.Op
	Multi(ctx context.Context, ops ...client.Op) ([]client.OpResult, error)
	Unlock(ctx context.Context) error
}

// termLease is an election term held as a lease: resigning is unlocking.
type termLease struct{ *election.Term }

func (t termLease) Unlock(ctx context.Context) error { return t.Resign(ctx) }

// lockLoad keeps a lock, a read/write lock or an election busy: each
// worker takes it (or campaigns) in a loop, writes while holding it (or
// leading) to a Fence and, guarded by the lease, to ZooKeeper, and
// releases it (or resigns). Every acquire, release, loss and write goes to
// a history checked against LockModel (ElectionModel for an election: the
// same model, one leader at a time). The "lock-combined" load runs
// combiningGoroutines goroutines on each worker's client, sharing one Lock
// with combining, each a client of its own in the history.
type lockLoad struct {
	name    string // "lock", "rwlock" or "election", or a name starting with one of them
	dir     string // the lock's (election's) path
	data    string // the node the guarded writes change
	workers []*worker
	readers int // rwlock: workers [0, readers) take the read lock
	// acquire takes the lock; the default is the recipe's (lock.Lock,
	// rwlock.RLock, rwlock.Lock or election.Campaign), chosen by name.
	acquire func(ctx context.Context, w *worker, shared bool) (lease, error)
	hold    time.Duration
	fan     int                           // goroutines a worker: combiningGoroutines for lock-combined, else 1
	locks   map[*client.Client]*lock.Lock // lock-combined: the Lock each worker's goroutines share

	model porcupine.Model
	h     *History
	fence *Fence
	prog  *Progress

	unlocked sync.Map // node path -> time.Time: the nodes whose holders' Unlock returned nil (dumpLoads)

	acquired, lost, released, refused, failed atomic.Int64
	local                                     atomic.Int64 // held from a holder of the same process (combining)
	requeued                                  atomic.Int64 // released by Term.Requeue, of released
}

// newLockLoad prepares a lock workload on workers; prog (shared by the
// scenario's workloads) records its progress.
func newLockLoad(t *testing.T, admin *client.Client, name string, workers []*worker, readers int, h *History, prog *Progress) *lockLoad {
	t.Helper()
	base := loadPath(t, admin, name, prog)
	data := base + "/data"
	if _, err := admin.Create(testContext(t, 30*time.Second), data, nil, client.Persistent); err != nil {
		t.Fatal(err)
	}
	l := &lockLoad{name: name, dir: base + "/lock", data: data, workers: workers, readers: readers,
		hold: 2 * time.Millisecond, model: LockModel, h: h, fence: NewFence(), prog: prog}
	switch {
	case strings.HasPrefix(name, "election"):
		l.model = ElectionModel
	case strings.HasPrefix(name, "semaphore"):
		l.model = SemaphoreModel(semaphoreMax)
	}
	l.acquire, l.fan = l.recipe, 1
	if strings.HasPrefix(name, "lock-combined") {
		l.fan, l.locks = combiningGoroutines, map[*client.Client]*lock.Lock{}
		for _, w := range workers {
			l.locks[w.c] = lock.New(w.c, l.dir, lock.WithLogger(recipeLog.logger), lock.WithCombining(combiningGoroutines))
		}
	}
	return l
}

// combiningGoroutines is how many goroutines of each worker of the
// lock-combined load share its Lock.
const combiningGoroutines = 3

func (l *lockLoad) Name() string { return l.name }

func (l *lockLoad) Workers() []*worker { return l.workers }

func (l *lockLoad) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i, w := range l.workers {
		for k := range l.fan {
			g := w
			if k > 0 { // the same client, another client of the history
				g = &worker{id: w.id + 1000*k, c: w.c, r: w.r, first: w.first}
			}
			wg.Go(func() { l.work(ctx, g, i < l.readers) })
		}
	}
	wg.Wait()
}

func (l *lockLoad) recipe(ctx context.Context, w *worker, shared bool) (lease, error) {
	switch {
	case strings.HasPrefix(l.name, "election"):
		term, err := election.New(w.c, l.dir, fmt.Sprintf("worker-%d", w.id), election.WithLogger(recipeLog.logger)).Campaign(ctx)
		if err != nil {
			return nil, err
		}
		return termLease{term}, nil
	case strings.HasPrefix(l.name, "semaphore"):
		return asLease(semaphore.New(w.c, l.dir, semaphoreMax, semaphore.WithLogger(recipeLog.logger)).Acquire(ctx))
	case strings.HasPrefix(l.name, "rwlock"):
		rw := rwlock.New(w.c, l.dir, rwlock.WithLogger(recipeLog.logger))
		if shared {
			return asLease(rw.RLock(ctx))
		}
		return asLease(rw.Lock(ctx))
	}
	if l.locks != nil {
		return asLease(l.locks[w.c].Lock(ctx))
	}
	return asLease(lock.New(w.c, l.dir, lock.WithLogger(recipeLog.logger)).Lock(ctx))
}

// semaphoreMax is the number of leases of the semaphore workload: two of
// its four workers at a time.
const semaphoreMax = 2

// recipeLog keeps the last warnings the lock workloads' recipes logged
// (a lease lost, a node that could not be deleted), for dumpLoads.
var recipeLog = newLogTail(200)

// logTail is a slog logger at Warn level that keeps its last lines.
type logTail struct {
	logger *slog.Logger
	mu     sync.Mutex
	lines  []string
	max    int
}

func newLogTail(max int) *logTail {
	l := &logTail{max: max}
	l.logger = slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return l
}

func (l *logTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimSpace(string(p)))
	if len(l.lines) > l.max {
		l.lines = l.lines[len(l.lines)-l.max:]
	}
	return len(p), nil
}

// Lines returns the lines kept, oldest first.
func (l *logTail) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// asLease returns a recipe's lease as a lease (nil on error, not a typed
// nil).
func asLease(l *recipes.Lease, err error) (lease, error) {
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (l *lockLoad) work(ctx context.Context, w *worker, shared bool) {
	// In an election, even workers step down with Term.Requeue (the
	// delete and the next candidacy's create in one transaction), odd
	// ones with Resign and Campaign.
	requeues := strings.HasPrefix(l.name, "election") && w.id%2 == 0
	var (
		b  client.Backoff
		hd *held // the term kept for Requeue
	)
	for ctx.Err() == nil {
		var err error
		if hd != nil {
			hd, err = l.requeue(ctx, hd)
		} else {
			hd, err = l.take(ctx, w, shared)
		}
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
		l.prog.Done(l.name)
		for range 2 {
			hd.write(ctx)
			time.Sleep(l.hold)
		}
		if !requeues || ctx.Err() != nil || hd.lease.Err() != nil {
			hd.release()
			hd = nil
		}
	}
	if hd != nil {
		hd.release()
	}
}

// held is a lease of the workload, recorded in its history.
type held struct {
	l      *lockLoad
	w      *worker
	lease  lease
	shared bool
	since  int64         // when the acquire returned, on the history's clock
	lost   chan struct{} // closed once lostAt is set
	lostAt int64         // when the worker saw the lease end without Unlock
}

// take acquires the lock for w and records the acquire; a failed acquire
// holds nothing and records nothing.
func (l *lockLoad) take(ctx context.Context, w *worker, shared bool) (*held, error) {
	call := l.h.Invoke(w.id, LockInput{Op: Acquire, Shared: shared})
	lease, err := l.acquire(ctx, w, shared)
	if err != nil {
		return nil, err
	}
	return l.took(call, w, shared, lease), nil
}

// requeue hands hd's election term over with Term.Requeue and returns the
// next one. The old node goes at some moment inside the call, so the
// release is recorded over the whole call, and the next term's acquire
// from its return (the term began a moment before, after the release).
func (l *lockLoad) requeue(ctx context.Context, hd *held) (*held, error) {
	token := hd.lease.Token()
	rel := l.h.Invoke(hd.w.id, LockInput{Op: Release, Token: token})
	next, err := hd.lease.(termLease).Requeue(ctx)
	switch {
	case !errors.Is(hd.lease.Err(), recipes.ErrReleased):
		// Lost before Requeue: recorded as the worker saw it.
		<-hd.lost
		l.h.Record(hd.w.id, LockInput{Op: Release, Token: token}, LockOutput{}, hd.since, hd.lostAt)
		l.lost.Add(1)
	case err != nil:
		rel.Unknown(LockOutput{}) // the delete may have gone with the transaction, or goes on in the background
		l.lost.Add(1)
	default:
		rel.Return(LockOutput{})
		l.released.Add(1)
		l.requeued.Add(1)
	}
	if err != nil {
		return nil, err
	}
	call := l.h.Invoke(hd.w.id, LockInput{Op: Acquire})
	return l.took(call, hd.w, false, termLease{next}), nil
}

// took records the acquire of lease, invoked as call, and returns it held.
func (l *lockLoad) took(call *Call, w *worker, shared bool, lease lease) *held {
	call.Return(LockOutput{Token: lease.Token()})
	l.acquired.Add(1)
	if lease.Token()%recipes.MaxHolders != 0 {
		l.local.Add(1)
	}
	hd := &held{l: l, w: w, lease: lease, shared: shared, since: l.h.Now(), lost: make(chan struct{})}
	context.AfterFunc(lease.Context(), func() {
		if !errors.Is(context.Cause(lease.Context()), recipes.ErrReleased) {
			hd.lostAt = l.h.Now()
			close(hd.lost)
		}
	})
	return hd
}

// release releases the lease and records it: a release, or a loss as the
// worker saw it (from the acquire to the moment Done fired).
func (hd *held) release() {
	l, token := hd.l, hd.lease.Token()
	// A context of its own: the workload's may have ended.
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(10*time.Second))
	defer cancel()
	call := l.h.Invoke(hd.w.id, LockInput{Op: Release, Token: token})
	err := hd.lease.Unlock(ctx)
	switch {
	case err == nil:
		call.Return(LockOutput{})
		l.released.Add(1)
		l.unlocked.Store(hd.lease.Node(), time.Now())
	case errors.Is(err, recipes.ErrLost):
		<-hd.lost
		l.h.Record(hd.w.id, LockInput{Op: Release, Token: token}, LockOutput{}, hd.since, hd.lostAt)
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
func (hd *held) write(ctx context.Context) {
	l, w, lease, token := hd.l, hd.w, hd.lease, hd.lease.Token()
	if !hd.shared {
		call := l.h.Invoke(w.id, LockInput{Op: Write, Token: token})
		if lease.Err() != nil {
			return
		}
		call.Return(LockOutput{OK: l.fence.Write(token)})
	}
	op := client.SetOp(l.data, binary.BigEndian.AppendUint64(nil, uint64(token)), -1)
	if hd.shared {
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
	violations = checkHistory(t, l.name, l.h, l.model)
	if r := l.fence.Refused(); r > 0 {
		// Every exclusive holder checks its lease before writing; a
		// refusal means it wrote after another holder had.
		t.Errorf("%s: the fence refused %d writes of live holders", l.name, r)
		violations += r
	}
	held = fmt.Sprintf("%s: %d held, %d released, %d lost, linearizable",
		l.name, l.acquired.Load(), l.released.Load(), l.lost.Load())
	if l.fan > 1 {
		held += fmt.Sprintf(" (%d handed over within a process)", l.local.Load())
	}
	if n := l.requeued.Load(); n > 0 {
		held += fmt.Sprintf(" (%d released by Requeue)", n)
	}
	return l.h.Len(), violations, held
}

// lockLoads returns the lock, rwlock, election and semaphore workloads, each on its
// own workers (sessions), sharing prog. Each has its own history.
func lockLoads(t *testing.T, e *env, admin *client.Client, prog *Progress, workers int, timeout time.Duration) []workload {
	return []workload{
		newLockLoad(t, admin, "lock", e.workers(t, workers, timeout), 0, NewHistory(), prog),
		newLockLoad(t, admin, "lock-combined", e.workers(t, max(workers/2, 2), timeout), 0, NewHistory(), prog),
		newLockLoad(t, admin, "rwlock", e.workers(t, workers, timeout), workers/2, NewHistory(), prog),
		newLockLoad(t, admin, "election", e.workers(t, workers, timeout), 0, NewHistory(), prog),
		// Every semaphore worker writes as a shared holder does (guarded
		// by its lease, not through the fence: holders overlap).
		newLockLoad(t, admin, "semaphore", e.workers(t, workers, timeout), workers, NewHistory(), prog),
	}
}

package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/zktest"
)

// counterLoad keeps a counter busy: every worker runs two goroutines on its
// one client (so their calls are combined into one write), each adding 1
// in a loop, a few milliseconds apart, and now and then reading. Every call goes to a history checked
// against CounterModel; once the load stops, the admin reads the final
// value, which must lie between the increments acknowledged and those plus
// the ones reported as unknown, and no two Add calls may have returned the
// same value.
type counterLoad struct {
	path    string
	admin   *client.Client
	workers []*worker
	h       *History
	prog    *Progress

	mu      sync.Mutex
	results map[int64]int // value returned by Add -> how many calls returned it

	acked, unknown, failed atomic.Int64
	final                  int64
}

const (
	goroutinesPerCounterWorker = 2
	counterPace                = 5 * time.Millisecond
)

func newCounterLoad(t *testing.T, admin *client.Client, workers []*worker, prog *Progress) *counterLoad {
	t.Helper()
	return &counterLoad{path: loadPath(t, admin, "counter", prog), admin: admin, workers: workers, h: NewHistory(), prog: prog, results: map[int64]int{}}
}

func (l *counterLoad) Name() string { return "counter" }

func (l *counterLoad) Workers() []*worker { return l.workers }

func (l *counterLoad) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, w := range l.workers {
		k := counter.New(w.c, l.path)
		for g := range goroutinesPerCounterWorker {
			wg.Go(func() { l.work(ctx, k, w.id*goroutinesPerCounterWorker+g) })
		}
	}
	wg.Wait()
	// The final read, after a sync, through the admin's session: every
	// write acknowledged or in doubt has been applied or never will be (a
	// write in flight on a dropped connection is refused once its session
	// moved; see the counter's package doc).
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(30*time.Second))
	defer cancel()
	if err := l.admin.Sync(ctx, l.path); err != nil {
		l.final = -1
		return
	}
	call := l.h.Invoke(-1, CounterInput{Op: Get})
	v, err := counter.New(l.admin, l.path).Get(ctx)
	if err != nil {
		l.final = -1
		return
	}
	call.Return(CounterOutput{Value: v})
	l.final = v
}

func (l *counterLoad) work(ctx context.Context, k *counter.Counter, id int) {
	var b client.Backoff
	for i := 0; ctx.Err() == nil; i++ {
		var err error
		if i%8 == 7 {
			err = l.get(ctx, k, id)
		} else {
			err = l.add(ctx, k, id)
		}
		if err != nil {
			if ctx.Err() == nil {
				b.Wait(ctx)
			}
			continue
		}
		b.Reset()
		l.prog.Done("counter")
		time.Sleep(counterPace) // keeps the history small enough to check
	}
}

// add adds 1 and records it: acknowledged with its result, in doubt
// (ErrOutcomeUnknown: applied once or never), or not applied (any other
// error, the counter's contract: nothing was written for it).
func (l *counterLoad) add(ctx context.Context, k *counter.Counter, id int) error {
	call := l.h.Invoke(id, CounterInput{Op: Add, Delta: 1})
	v, err := k.Add(ctx, 1)
	switch {
	case err == nil:
		call.Return(CounterOutput{Value: v})
		l.acked.Add(1)
		l.mu.Lock()
		l.results[v]++
		l.mu.Unlock()
	case errors.Is(err, client.ErrOutcomeUnknown) && ctx.Err() == nil:
		// The counter read the node back and found it past the version
		// the write was conditioned on: applied before now, or never.
		call.Return(CounterOutput{Unknown: true})
		l.unknown.Add(1)
	case errors.Is(err, client.ErrOutcomeUnknown):
		// Cut short by the context: may still be applied.
		call.Unknown(CounterOutput{Unknown: true})
		l.unknown.Add(1)
	default:
		l.failed.Add(1)
	}
	return err
}

func (l *counterLoad) get(ctx context.Context, k *counter.Counter, id int) error {
	call := l.h.Invoke(id, CounterInput{Op: Get})
	v, err := k.Get(ctx)
	if err == nil {
		call.Return(CounterOutput{Value: v})
	}
	return err
}

func (l *counterLoad) Check(t *testing.T) (ops, violations int, held string) {
	t.Helper()
	acked, unknown := l.acked.Load(), l.unknown.Load()
	if l.final < 0 {
		t.Errorf("counter: the final value could not be read")
		violations++
	} else if l.final < acked || l.final > acked+unknown {
		t.Errorf("counter: final value %d, want between %d acknowledged and %d (plus %d in doubt)", l.final, acked, acked+unknown, unknown)
		violations++
	}
	for v, n := range l.results {
		if n > 1 {
			t.Errorf("counter: %d Add calls returned %d", n, v)
			violations++
		}
	}
	violations += checkHistory(t, "counter", l.h, CounterModel)
	held = fmt.Sprintf("counter: %d increments acknowledged, %d in doubt, %d failed unapplied; final value %d, linearizable",
		acked, unknown, l.failed.Load(), l.final)
	return l.h.Len(), violations, held
}

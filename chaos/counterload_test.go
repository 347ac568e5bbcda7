package chaos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/zktest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
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
	spans   []*tracetest.SpanRecorder // each worker's counter spans: which write applied each call
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

// newCounterLoad prepares the counter workload on n workers of its own,
// each recording its counter's spans.
func newCounterLoad(t *testing.T, e *env, admin *client.Client, n int, timeout time.Duration, prog *Progress) *counterLoad {
	t.Helper()
	l := &counterLoad{path: loadPath(t, admin, "counter", prog), admin: admin, h: NewHistory(), prog: prog, results: map[int64]int{}}
	for i := range n {
		rec := tracetest.NewSpanRecorder()
		l.spans = append(l.spans, rec)
		l.workers = append(l.workers, e.worker(t, i, timeout, client.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))))
	}
	return l
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
	var dups []int64
	for v, n := range l.results {
		if n > 1 {
			dups = append(dups, v)
		}
	}
	if len(dups) > 0 {
		slices.Sort(dups)
		writes := l.writes()
		for _, v := range dups {
			t.Errorf("counter: %d Add calls returned %d: %s", l.results[v], v, writes.explain(v))
			violations++
		}
	}
	if bad := checkHistory(t, "counter", l.h, CounterModel); bad > 0 {
		violations += bad
		for _, v := range orderViolations(l.h.Operations(), l.writes()) {
			t.Errorf("counter: out of order: %s", v)
		}
	}
	held = fmt.Sprintf("counter: %d increments acknowledged, %d in doubt, %d failed unapplied; final value %d, linearizable",
		acked, unknown, l.failed.Load(), l.final)
	return l.h.Len(), violations, held
}

// counterWrite is which write applied an acknowledged call, or which
// state of the node answered a get, as its span tells: the zxid and the
// node's version (-1 when the span does not say: a delta another writer
// applied).
type counterWrite struct {
	worker  int
	zxid    int64
	version int64
}

func (cw counterWrite) String() string {
	if cw.version < 0 {
		return fmt.Sprintf("worker %d: zxid %#x", cw.worker, cw.zxid)
	}
	return fmt.Sprintf("worker %d: zxid %#x version %d", cw.worker, cw.zxid, cw.version)
}

// counterWrites are the acknowledged calls' writes, by operation and the
// value each call returned.
type counterWrites struct {
	byValue   map[CounterOp]map[int64][]counterWrite
	versionOf map[int64]int64 // zxid -> version, from any span that knows it
}

// writes reads the workers' spans.
func (l *counterLoad) writes() counterWrites {
	w := counterWrites{byValue: map[CounterOp]map[int64][]counterWrite{Add: {}, Get: {}}, versionOf: map[int64]int64{}}
	ops := map[string]CounterOp{"zkit counter add": Add, "zkit counter get": Get}
	for i, rec := range l.spans {
		for _, sp := range rec.Ended() {
			op, ok := ops[sp.Name()]
			if !ok {
				continue
			}
			for _, ev := range sp.Events() {
				if ev.Name != "applied" {
					continue
				}
				cw, value := counterWrite{worker: i, version: -1}, int64(-1)
				for _, kv := range ev.Attributes {
					switch kv.Key {
					case "zkit.counter.value":
						value = kv.Value.AsInt64()
					case "zkit.counter.zxid":
						cw.zxid = kv.Value.AsInt64()
					case "zkit.counter.version":
						cw.version = kv.Value.AsInt64()
					}
				}
				w.byValue[op][value] = append(w.byValue[op][value], cw)
				if cw.zxid != 0 && cw.version >= 0 {
					w.versionOf[cw.zxid] = cw.version
				}
			}
		}
	}
	return w
}

// of describes the calls of op that returned v.
func (w counterWrites) of(op CounterOp, v int64) string {
	var parts []string
	for _, cw := range w.byValue[op][v] {
		if cw.version < 0 {
			if ver, ok := w.versionOf[cw.zxid]; ok {
				cw.version = ver
			}
		}
		parts = append(parts, cw.String())
	}
	if len(parts) == 0 {
		return "no span"
	}
	return strings.Join(parts, ", ")
}

// explain says which writes returned value v from two or more Adds, and
// what that shows: one write reported twice (zkit's fault), or a write
// that ZooKeeper lost after acknowledging it: its version was
// acknowledged again, to another transaction (at most one of them can be
// in ZooKeeper's history, and the value computed from a lost write is
// computed again).
func (w counterWrites) explain(v int64) string {
	contested := w.contested()
	zxids := map[int64]int{}
	verdict := "unexplained"
	for _, cw := range w.byValue[Add][v] {
		zxids[cw.zxid]++
		if c, ok := contested[cw.zxid]; ok && verdict == "unexplained" {
			verdict = fmt.Sprintf("ZooKeeper acknowledged version %d of the node twice: %s", c.version, c.by)
		}
	}
	for z, n := range zxids {
		if z != 0 && n > 1 {
			verdict = fmt.Sprintf("write %#x reported twice: zkit's fault", z)
		}
	}
	return w.of(Add, v) + " (" + verdict + ")"
}

// contestedWrite is a version of the node that ZooKeeper acknowledged to
// more than one transaction.
type contestedWrite struct {
	version int64
	by      string // the transactions
}

// contested returns, for every zxid whose version another acknowledged
// transaction reached too, that version and the transactions.
func (w counterWrites) contested() map[int64]contestedWrite {
	byVersion := map[int64][]int64{}
	for zxid, ver := range w.versionOf {
		byVersion[ver] = append(byVersion[ver], zxid)
	}
	out := map[int64]contestedWrite{}
	for ver, zs := range byVersion {
		if len(zs) < 2 {
			continue
		}
		slices.Sort(zs)
		var by []string
		for _, z := range zs {
			by = append(by, fmt.Sprintf("%#x", z))
		}
		for _, z := range zs {
			out[z] = contestedWrite{ver, strings.Join(by, " and ")}
		}
	}
	return out
}

// orderViolations returns the first few pairs of acknowledged calls whose
// values go back in real time: a call that began after another had
// returned must see at least its value (and an Add one more). Porcupine
// says whether the history is linearizable; this says where it is not.
func orderViolations(ops []porcupine.Operation, w counterWrites) []string {
	type done struct {
		op  porcupine.Operation
		val int64
	}
	var known []done
	for _, op := range ops {
		in, out := op.Input.(CounterInput), op.Output.(CounterOutput)
		if out.Unknown || op.Return == Never || (in.Op != Add && in.Op != Get) {
			continue
		}
		known = append(known, done{op, out.Value})
	}
	byReturn := slices.Clone(known)
	slices.SortFunc(byReturn, func(a, b done) int { return cmp.Compare(a.op.Return, b.op.Return) })
	slices.SortFunc(known, func(a, b done) int { return cmp.Compare(a.op.Call, b.op.Call) })
	var out []string
	i, best := 0, done{val: -1}
	for _, b := range known {
		for ; i < len(byReturn) && byReturn[i].op.Return < b.op.Call; i++ {
			if byReturn[i].val > best.val {
				best = byReturn[i]
			}
		}
		in := b.op.Input.(CounterInput)
		want := best.val
		if in.Op == Add {
			want += in.Delta
		}
		if best.val < 0 || b.val >= want {
			continue
		}
		a := best.op.Input.(CounterInput)
		out = append(out, fmt.Sprintf("%s -> %d (client %d, %v-%v; %s) began after %s -> %d (client %d, returned at %v; %s)",
			opName(in.Op), b.val, b.op.ClientId, time.Duration(b.op.Call), time.Duration(b.op.Return), w.of(in.Op, b.val),
			opName(a.Op), best.val, best.op.ClientId, time.Duration(best.op.Return), w.of(a.Op, best.val)))
		if len(out) == 5 {
			break
		}
	}
	return out
}

func opName(op CounterOp) string {
	if op == Add {
		return "add(1)"
	}
	return "get()"
}

// Diagnose logs, without judging, the Adds that returned one value and
// which writes they came from: for a run set aside because ZooKeeper lost
// acknowledged writes, it shows whether the counter's duplicates are
// those of the lost writes.
func (l *counterLoad) Diagnose(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	var dups []int64
	for v, n := range l.results {
		if n > 1 {
			dups = append(dups, v)
		}
	}
	l.mu.Unlock()
	if len(dups) == 0 {
		return
	}
	slices.Sort(dups)
	writes := l.writes()
	for _, v := range dups {
		t.Logf("counter: %d Add calls returned %d: %s", l.results[v], v, writes.explain(v))
	}
}

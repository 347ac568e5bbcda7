package chaos

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// The checkers can fail: a history with two holders at once, a stale
// holder's accepted write, a lost increment or a second leader is
// rejected, and the same histories made correct are accepted.
func TestModelsRejectBrokenHistories(t *testing.T) {
	acq := func(shared bool) LockInput { return LockInput{Op: Acquire, Shared: shared} }
	rel := func(tok int64) LockInput { return LockInput{Op: Release, Token: tok} }
	wr := func(tok int64) LockInput { return LockInput{Op: Write, Token: tok} }
	tok := func(tok int64) LockOutput { return LockOutput{Token: tok} }
	ok := LockOutput{OK: true}
	none := LockOutput{}
	op := func(client int, in, out any, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret}
	}
	for _, tc := range []struct {
		name    string
		model   porcupine.Model
		history []porcupine.Operation
		legal   bool
	}{
		{"three holders of a semaphore of two", SemaphoreModel(2), []porcupine.Operation{
			op(0, acq(false), tok(10), 0, 1),
			op(1, acq(false), tok(20), 2, 3),
			op(2, acq(false), tok(30), 4, 5), // neither has released
			op(0, rel(10), none, 6, 7),
		}, false},
		{"two holders of a semaphore of two, then a third", SemaphoreModel(2), []porcupine.Operation{
			op(0, acq(false), tok(10), 0, 1),
			op(1, acq(false), tok(20), 2, 3),
			op(2, acq(false), tok(30), 4, 8), // acquired once 0 released
			op(0, rel(10), none, 5, 6),
			op(1, wr(20), ok, 9, 10),
		}, true},
		{"a semaphore lease's write after its release", SemaphoreModel(2), []porcupine.Operation{
			op(0, acq(false), tok(10), 0, 1),
			op(0, rel(10), none, 2, 3),
			op(0, wr(10), ok, 4, 5),
		}, false},
		{"two holders at once", LockModel, []porcupine.Operation{
			op(0, acq(false), tok(10), 0, 1),
			op(1, acq(false), tok(20), 2, 3), // 0 has not released
			op(0, rel(10), none, 4, 5),
			op(1, rel(20), none, 6, 7),
		}, false},
		{"one holder after the other", LockModel, []porcupine.Operation{
			op(0, acq(false), tok(10), 0, 1),
			op(1, acq(false), tok(20), 2, 6), // acquired once 0 released
			op(0, rel(10), none, 4, 5),
			op(1, rel(20), none, 7, 8),
		}, true},
		{"overlapping release and acquire", LockModel, []porcupine.Operation{
			op(0, acq(false), tok(10), 0, 1),
			op(0, rel(10), none, 2, 5),
			op(1, acq(false), tok(20), 3, 4), // may linearize after the release
		}, true},
		{"a token that goes backwards", LockModel, []porcupine.Operation{
			op(0, acq(false), tok(20), 0, 1),
			op(0, rel(20), none, 2, 3),
			op(1, acq(false), tok(10), 4, 5),
		}, false},
		{"a stale holder's write accepted", LockModel, []porcupine.Operation{
			op(0, acq(false), tok(10), 0, 1),
			op(0, rel(10), none, 1, 2), // lost: seen at 2
			op(1, acq(false), tok(20), 3, 4),
			op(0, wr(10), ok, 5, 6), // accepted after 1 acquired
		}, false},
		{"a stale holder's write refused", LockModel, []porcupine.Operation{
			op(0, acq(false), tok(10), 0, 1),
			op(0, rel(10), none, 1, 2),
			op(1, acq(false), tok(20), 3, 4),
			op(0, wr(10), LockOutput{OK: false}, 5, 6),
		}, true},
		{"a writer beside a reader", LockModel, []porcupine.Operation{
			op(0, acq(true), tok(10), 0, 1),
			op(1, acq(false), tok(20), 2, 3),
			op(0, rel(10), none, 4, 5),
		}, false},
		{"readers together", LockModel, []porcupine.Operation{
			op(0, acq(true), tok(10), 0, 1),
			op(1, acq(true), tok(20), 2, 3),
			op(0, rel(10), none, 4, 5),
			op(1, rel(20), none, 4, 5),
			op(2, acq(false), tok(30), 6, 7),
		}, true},
		{"two leaders at once", ElectionModel, []porcupine.Operation{
			op(0, acq(false), tok(10), 0, 1),
			op(1, acq(false), tok(20), 2, 3),
		}, false},
		{"a lost increment", CounterModel, []porcupine.Operation{
			op(0, CounterInput{Op: Add, Delta: 1}, CounterOutput{Value: 1}, 0, 1),
			op(1, CounterInput{Op: Add, Delta: 1}, CounterOutput{Value: 1}, 2, 3),
		}, false},
		{"a doubled increment", CounterModel, []porcupine.Operation{
			op(0, CounterInput{Op: Add, Delta: 1}, CounterOutput{Unknown: true}, 0, Never),
			op(1, CounterInput{Op: Get}, CounterOutput{Value: 2}, 2, 3),
		}, false},
		{"an unknown increment, applied or not", CounterModel, []porcupine.Operation{
			op(0, CounterInput{Op: Add, Delta: 1}, CounterOutput{Unknown: true}, 0, Never),
			op(1, CounterInput{Op: Get}, CounterOutput{Value: 0}, 2, 3),
			op(1, CounterInput{Op: Add, Delta: 5}, CounterOutput{Value: 6}, 4, 5),
		}, true},
		{"an increment in doubt, applied before it returned", CounterModel, []porcupine.Operation{
			op(0, CounterInput{Op: Add, Delta: 1}, CounterOutput{Unknown: true}, 0, 1),
			op(1, CounterInput{Op: Add, Delta: 1}, CounterOutput{Value: 2}, 2, 3),
		}, true},
		{"an increment in doubt, not applied", CounterModel, []porcupine.Operation{
			op(0, CounterInput{Op: Add, Delta: 1}, CounterOutput{Unknown: true}, 0, 1),
			op(1, CounterInput{Op: Add, Delta: 1}, CounterOutput{Value: 1}, 2, 3),
		}, true},
		{"an increment in doubt, applied after it returned", CounterModel, []porcupine.Operation{
			op(0, CounterInput{Op: Add, Delta: 1}, CounterOutput{Unknown: true}, 0, 1),
			op(1, CounterInput{Op: Get}, CounterOutput{Value: 0}, 2, 3),
			op(1, CounterInput{Op: Get}, CounterOutput{Value: 1}, 4, 5),
		}, false},
		{"two increments in doubt, one doubled", CounterModel, []porcupine.Operation{
			op(0, CounterInput{Op: Add, Delta: 1}, CounterOutput{Unknown: true}, 0, 1),
			op(1, CounterInput{Op: Add, Delta: 1}, CounterOutput{Unknown: true}, 0, 1),
			op(2, CounterInput{Op: Get}, CounterOutput{Value: 3}, 2, 3),
		}, false},
	} {
		got := porcupine.CheckOperationsTimeout(tc.model, tc.history, 10*time.Second)
		want := porcupine.Illegal
		if tc.legal {
			want = porcupine.Ok
		}
		if got != want {
			t.Errorf("%s: %v, want %v", tc.name, got, want)
		}
	}
}

// A recorded history goes through the same check: two recorded holders at
// once are caught.
func TestHistoryCatchesTwoHolders(t *testing.T) {
	h := NewHistory()
	a := h.Invoke(0, LockInput{Op: Acquire})
	a.Return(LockOutput{Token: 1})
	b := h.Invoke(1, LockInput{Op: Acquire})
	b.Return(LockOutput{Token: 2})
	h.Invoke(0, LockInput{Op: Release, Token: 1}).Return(LockOutput{})
	if got := h.Check(LockModel, 10*time.Second); got != porcupine.Illegal {
		t.Fatalf("two holders at once: %v, want Illegal", got)
	}
}

// The fence accepts the highest token seen and refuses, and counts, lower
// ones.
func TestFenceRefusesStaleTokens(t *testing.T) {
	f := NewFence()
	for _, w := range []struct {
		token int64
		ok    bool
	}{{5, true}, {5, true}, {7, true}, {5, false}, {6, false}, {7, true}, {9, true}} {
		if got := f.Write(w.token); got != w.ok {
			t.Errorf("Write(%d) = %v, want %v", w.token, got, w.ok)
		}
	}
	if f.Refused() != 2 || f.Accepted() != 5 || f.Token(5) != (TokenCount{Accepted: 2, Refused: 1}) {
		t.Fatalf("refused %d accepted %d token 5 %+v", f.Refused(), f.Accepted(), f.Token(5))
	}
}

// The barrier's threshold check sees an Enter that returned while fewer
// than count members were present, and accepts one that did not.
func TestEarlyEntries(t *testing.T) {
	present := map[int][]interval{
		0: {{0, 10}},
		1: {{2, 10}},
		2: {{5, math.MaxInt64}}, // failed, still counted
		3: {{20, 30}},
	}
	if got := earlyEntries([]entry{{member: 2, from: 5, to: 8}}, present, 3); len(got) != 0 {
		t.Errorf("three present: %v", got)
	}
	if got := earlyEntries([]entry{{member: 0, from: 0, to: 3}}, present, 3); len(got) != 1 {
		t.Errorf("two present, want one early entry: %v", got)
	}
}

// orderViolations names the calls that saw the counter go back in real
// time, and only those.
func TestCounterOrderViolations(t *testing.T) {
	op := func(client int, in CounterOp, value, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: CounterInput{Op: in, Delta: 1},
			Output: CounterOutput{Value: value}, Call: call, Return: ret}
	}
	fine := []porcupine.Operation{
		op(0, Add, 1, 0, 10), op(1, Add, 2, 5, 20), // concurrent: any order
		op(0, Get, 2, 21, 30), op(1, Add, 3, 31, 40),
		{ClientId: 2, Input: CounterInput{Op: Add, Delta: 1}, Output: CounterOutput{Unknown: true}, Call: 35, Return: Never},
	}
	if got := orderViolations(fine, counterWrites{}); len(got) != 0 {
		t.Fatalf("a history in order: %v", got)
	}
	stale := append(slices.Clone(fine), op(2, Get, 2, 41, 50)) // began after add -> 3 returned
	got := orderViolations(stale, counterWrites{})
	if len(got) != 1 || !strings.Contains(got[0], "get() -> 2 (client 2") || !strings.Contains(got[0], "add(1) -> 3 (client 1") {
		t.Fatalf("a stale get: %v", got)
	}
	twice := append(slices.Clone(fine), op(2, Add, 3, 41, 50)) // the value the add before it returned
	if got := orderViolations(twice, counterWrites{}); len(got) != 1 || !strings.Contains(got[0], "add(1) -> 3 (client 2") {
		t.Fatalf("an add returning an earlier add's value: %v", got)
	}
}

// explain tells a write reported twice (zkit's) from a write that
// ZooKeeper lost after acknowledging it (its version acknowledged again
// to another transaction), and says so when it can tell neither.
func TestCounterDuplicateExplained(t *testing.T) {
	w := counterWrites{
		byValue: map[CounterOp]map[int64][]counterWrite{Add: {
			147: {{worker: 2, zxid: 0x700000049, version: 127}, {worker: 1, zxid: 0x1500000026, version: 126}},
			148: {{worker: 0, zxid: 0x1500000030, version: 128}, {worker: 1, zxid: 0x1500000030, version: -1}},
			149: {{worker: 0, zxid: 0x1500000031, version: 129}, {worker: 1, zxid: 0x1500000032, version: 130}},
		}},
		versionOf: map[int64]int64{0x700000049: 127, 0x150000002a: 127, 0x1500000026: 126,
			0x1500000030: 128, 0x1500000031: 129, 0x1500000032: 130},
	}
	for v, want := range map[int64]string{
		147: "ZooKeeper acknowledged version 127 of the node twice: 0x700000049 and 0x150000002a",
		148: "write 0x1500000030 reported twice: zkit's fault",
		149: "(unexplained)",
	} {
		if got := w.explain(v); !strings.Contains(got, want) {
			t.Errorf("explain(%d) = %q, want it to say %q", v, got, want)
		}
	}
}

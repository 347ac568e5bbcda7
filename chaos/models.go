package chaos

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/anishathalye/porcupine"
)

// LockOp is what a lock operation does.
type LockOp int

// The operations of a lock history.
const (
	// Acquire: the caller now holds the lock with the token in the output.
	Acquire LockOp = iota + 1
	// Release: the holder of Token no longer holds it, because it released
	// the lock or because it lost it (session expired, connection
	// suspended, process paused); for a loss the call time is the last
	// moment it surely held and the return time the moment it saw the loss.
	Release
	// Write: the holder of Token wrote to a fenced resource (a guarded
	// ZooKeeper write or the Fence); the output says whether the write was
	// accepted. Accepted writes must happen while Token holds the lock.
	Write
)

// LockInput is the input of a lock operation.
type LockInput struct {
	Op     LockOp
	Shared bool  // Acquire: a read (shared) lock
	Token  int64 // Release and Write: the holder's fencing token
}

// LockOutput is the output of a lock operation.
type LockOutput struct {
	Token int64 // Acquire: the fencing token of the held lock
	OK    bool  // Write: accepted
}

// lockState is the lock's state in the model; it is never mutated.
type lockState struct {
	writer    int64   // the exclusive holder's token, 0 when none
	readers   []int64 // the shared holders' tokens, sorted
	last      int64   // the highest token granted
	lastWrite int64   // the highest exclusive token granted
}

func (s lockState) holds(t int64) bool {
	return t != 0 && (s.writer == t || slices.Contains(s.readers, t))
}

// LockModel is a read/write lock with fencing tokens (an exclusive lock
// uses only exclusive acquires; leadership is the same model, see
// ElectionModel):
//   - an exclusive acquire succeeds only when nobody holds the lock, and its
//     token is higher than every token granted before;
//   - a shared acquire succeeds only when no exclusive holder holds it, and
//     its token is higher than every exclusive token granted before;
//   - a release or loss ends the hold of its token;
//   - an accepted write happens while its token holds the lock.
var LockModel = porcupine.Model{
	Init: func() any { return lockState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(lockState), input.(LockInput), output.(LockOutput)
		switch in.Op {
		case Acquire:
			t := out.Token
			if in.Shared {
				if s.writer != 0 || t <= s.lastWrite || slices.Contains(s.readers, t) {
					return false, s
				}
				r := append(slices.Clone(s.readers), t)
				slices.Sort(r)
				return true, lockState{readers: r, last: max(s.last, t), lastWrite: s.lastWrite}
			}
			if s.writer != 0 || len(s.readers) > 0 || t <= s.last {
				return false, s
			}
			return true, lockState{writer: t, last: t, lastWrite: t}
		case Release:
			switch {
			case s.writer == in.Token && in.Token != 0:
				return true, lockState{last: s.last, lastWrite: s.lastWrite}
			case slices.Contains(s.readers, in.Token):
				r := slices.DeleteFunc(slices.Clone(s.readers), func(x int64) bool { return x == in.Token })
				return true, lockState{readers: r, last: s.last, lastWrite: s.lastWrite}
			}
			return false, s
		case Write:
			return !out.OK || s.holds(in.Token), s
		}
		return false, s
	},
	Equal: func(a, b any) bool {
		x, y := a.(lockState), b.(lockState)
		return x.writer == y.writer && x.last == y.last && x.lastWrite == y.lastWrite && slices.Equal(x.readers, y.readers)
	},
	Hash: func(state any) uint64 {
		s := state.(lockState)
		h := fnv.New64a()
		fmt.Fprint(h, s.writer, s.last, s.lastWrite, s.readers)
		return h.Sum64()
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(LockInput), output.(LockOutput)
		switch in.Op {
		case Acquire:
			if in.Shared {
				return "rlock() -> " + strconv.FormatInt(out.Token, 10)
			}
			return "lock() -> " + strconv.FormatInt(out.Token, 10)
		case Release:
			return "release(" + strconv.FormatInt(in.Token, 10) + ")"
		}
		return fmt.Sprintf("write(%d) -> %v", in.Token, out.OK)
	},
	DescribeState: func(state any) string {
		s := state.(lockState)
		return fmt.Sprintf("writer=%d readers=%v", s.writer, s.readers)
	},
}

// SemaphoreModel returns the model of a counting semaphore of max leases:
// an acquire succeeds only while fewer than max leases are held, a release
// or loss ends the hold of its token, and an accepted write happens while
// its token holds a lease. Acquires use LockInput with Shared unset.
func SemaphoreModel(max int) porcupine.Model {
	m := LockModel
	m.Init = func() any { return lockState{} }
	m.Step = func(state, input, output any) (bool, any) {
		s, in, out := state.(lockState), input.(LockInput), output.(LockOutput)
		switch in.Op {
		case Acquire:
			t := out.Token
			if len(s.readers) >= max || t == 0 || slices.Contains(s.readers, t) {
				return false, s
			}
			r := append(slices.Clone(s.readers), t)
			slices.Sort(r)
			return true, lockState{readers: r}
		case Release:
			if !slices.Contains(s.readers, in.Token) {
				return false, s
			}
			r := slices.DeleteFunc(slices.Clone(s.readers), func(x int64) bool { return x == in.Token })
			return true, lockState{readers: r}
		case Write:
			return !out.OK || s.holds(in.Token), s
		}
		return false, s
	}
	m.DescribeOperation = func(input, output any) string {
		in, out := input.(LockInput), output.(LockOutput)
		switch in.Op {
		case Acquire:
			return "acquire() -> " + strconv.FormatInt(out.Token, 10)
		case Release:
			return "release(" + strconv.FormatInt(in.Token, 10) + ")"
		}
		return fmt.Sprintf("write(%d) -> %v", in.Token, out.OK)
	}
	m.DescribeState = func(state any) string {
		return fmt.Sprintf("holders=%v", state.(lockState).readers)
	}
	return m
}

// ElectionModel is one leader at a time: leadership is an exclusive lock
// whose token is the leader's fencing token. Record becoming leader as an
// exclusive Acquire, stepping down (or losing leadership) as Release, and
// what the leader does as Write.
var ElectionModel = LockModel

// CounterOp is what a counter operation does.
type CounterOp int

// The operations of a counter history.
const (
	// Add adds Delta and returns the new value.
	Add CounterOp = iota + 1
	// Get returns the value.
	Get
	// Set sets the value to Value.
	Set
)

// CounterInput is the input of a counter operation.
type CounterInput struct {
	Op    CounterOp
	Delta int64 // Add
	Value int64 // Set
}

// CounterOutput is the output of a counter operation: the value after it
// (for Add and Get). An operation whose outcome is unknown has Unknown set:
// it took effect once or not at all. Record it with Call.Return when its
// effect, if any, came before it returned (the counter's ErrOutcomeUnknown
// while its context was live), and with Call.Unknown when it may still
// take effect later.
type CounterOutput struct {
	Value   int64
	Unknown bool
}

// counterRange is the counter's state as CounterModel tracks it: the
// values it may hold, lo to hi. Operations in doubt widen it; an operation
// that returns a value narrows it to that value.
type counterRange struct{ lo, hi int64 }

// CounterModel is a linearizable counter starting at 0: every Add is
// applied exactly once, or at most once if its outcome is unknown, and
// every read returns the value after all the operations linearized before
// it. An Add in doubt leaves the counter at either value, so the model
// keeps the range of values the counter may hold (exact when every delta
// in doubt is 1, a superset otherwise): a deterministic state, so that a
// history with operations in doubt stays cheap to check.
var CounterModel = porcupine.Model{
	Init: func() any { return counterRange{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(counterRange), input.(CounterInput), output.(CounterOutput)
		within := func(v int64) bool { return s.lo <= v && v <= s.hi }
		switch {
		case in.Op == Add && out.Unknown:
			return true, counterRange{min(s.lo, s.lo+in.Delta), max(s.hi, s.hi+in.Delta)}
		case in.Op == Add:
			return within(out.Value - in.Delta), counterRange{out.Value, out.Value}
		case in.Op == Get && out.Unknown:
			return true, s
		case in.Op == Get:
			return within(out.Value), counterRange{out.Value, out.Value}
		case in.Op == Set:
			return true, counterRange{in.Value, in.Value}
		}
		return false, s
	},
	DescribeState: func(state any) string {
		s := state.(counterRange)
		if s.lo == s.hi {
			return strconv.FormatInt(s.lo, 10)
		}
		return fmt.Sprintf("%d..%d", s.lo, s.hi)
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(CounterInput), output.(CounterOutput)
		res := strconv.FormatInt(out.Value, 10)
		if out.Unknown {
			res = "?"
		}
		switch in.Op {
		case Add:
			return fmt.Sprintf("add(%d) -> %s", in.Delta, res)
		case Get:
			return "get() -> " + res
		}
		return fmt.Sprintf("set(%d)", in.Value)
	},
}

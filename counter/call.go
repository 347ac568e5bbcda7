package counter

import (
	"fmt"
	"log/slog"

	"github.com/zkit-dev/zkit/client"
)

// opKind is what a call does to the counter.
type opKind int

const (
	opGet opKind = iota
	opAdd
	opSet
	opCAS
)

var opNames = [...]string{opGet: "get", opAdd: "add", opSet: "set", opCAS: "compareAndSet"}

// call is one caller's operation. Calls queued together are applied in
// order to the value read and written with one conditional write.
type call struct {
	kind    opKind
	a, b    int64                 // add: delta; set: value; compareAndSet: old, new
	create  []client.CreateOption // the ACL of what it creates: the counter, its parents
	log     *slog.Logger
	done    chan struct{} // closed once res is set
	res     result
	batch   *batch // set when a batch takes the call (under engine.mu)
	waiting bool   // the caller still waits for res (under engine.mu)

	// Set with res: how many calls its write combined, and how many
	// writes that batch lost to other writers before its own went through.
	combined, conflicts int
}

// result is what a call returns.
type result struct {
	value   int64 // the value after the call (compareAndSet: the value found, when not swapped)
	swapped bool  // compareAndSet only
	err     error

	// Which write applied the call, or which state of the node answered
	// it, for its span: the zxid of the write (0 when not known: a node
	// that does not exist) and the node's version after
	// it (-1 when not known: a delta another writer applied).
	zxid    int64
	version int32
}

// state is the counter as the calls of a batch see it.
type state struct {
	value  int64
	exists bool
}

// apply returns the state after c, and c's result, when applied to s.
func (c *call) apply(s state, enc Encoding, path string) (state, result) {
	switch c.kind {
	case opAdd:
		v, ok := enc.add(s.value, c.a)
		if !ok {
			return s, result{err: &OverflowError{Path: path, Encoding: enc, Value: s.value, Delta: c.a}}
		}
		return state{v, true}, result{value: v}
	case opSet:
		return state{c.a, true}, result{value: c.a}
	case opCAS:
		if s.value != c.a {
			return s, result{value: s.value}
		}
		return state{c.b, true}, result{value: c.b, swapped: true}
	}
	return s, result{value: s.value}
}

// unknown is the error of a call whose write may or may not have been
// applied.
func (c *call) unknown(path string, cause error) error {
	return &client.OutcomeUnknownError{Op: "counter " + opNames[c.kind], Path: path, Err: cause}
}

func (c *call) String() string { return fmt.Sprintf("%s(%d, %d)", opNames[c.kind], c.a, c.b) }

package chaos

import (
	"math"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Never is the completion time of an operation whose outcome is unknown:
// it may take effect at any point after its invocation, or not at all.
const Never int64 = math.MaxInt64

// History records operations with their invocation and completion times,
// all read from one monotonic clock, for a porcupine check. It is safe for
// concurrent use.
type History struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
}

// NewHistory starts an empty history; its clock starts now.
func NewHistory() *History { return &History{start: time.Now()} }

// Now is the history's clock: nanoseconds since NewHistory, monotonic.
func (h *History) Now() int64 { return int64(time.Since(h.start)) }

// At converts a time (taken with time.Now) to the history's clock.
func (h *History) At(t time.Time) int64 { return int64(t.Sub(h.start)) }

// Call is an operation that has been invoked and not yet recorded.
type Call struct {
	h      *History
	client int
	input  any
	call   int64
}

// Invoke records that client invokes an operation with input, now.
func (h *History) Invoke(client int, input any) *Call {
	return &Call{h: h, client: client, input: input, call: h.Now()}
}

// Return records the operation as completed now with output.
func (c *Call) Return(output any) { c.h.add(c.client, c.input, output, c.call, c.h.Now()) }

// Unknown records the operation with an unknown outcome: output is what it
// returned if it took effect, and it may take effect at any time after its
// invocation, or never.
func (c *Call) Unknown(output any) { c.h.add(c.client, c.input, output, c.call, Never) }

// Record adds a complete operation with explicit times on the history's
// clock.
func (h *History) Record(client int, input, output any, call, ret int64) {
	h.add(client, input, output, call, ret)
}

func (h *History) add(client int, input, output any, call, ret int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: input, Output: output, Call: call, Return: ret})
}

// Operations returns a copy of what has been recorded.
func (h *History) Operations() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]porcupine.Operation(nil), h.ops...)
}

// Len is the number of operations recorded.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ops)
}

// Check checks the history against model within timeout. It returns
// porcupine's verdict: Ok, Illegal (a violation), or Unknown (the search
// ran out of time, which the suite counts as a failure).
func (h *History) Check(model porcupine.Model, timeout time.Duration) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(model, h.Operations(), timeout)
}

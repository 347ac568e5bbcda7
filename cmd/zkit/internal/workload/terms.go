package workload

import (
	"fmt"
	"sync/atomic"
	"time"
)

// terms times leadership failovers and checks that terms never overlap.
type terms struct {
	stepDown atomic.Int64 // when the last leader stepped down (unix ns); 0 before the first
	ex       exclusion
}

// begin records a new term and returns the time since the previous
// leader stepped down (negative for the first term: no sample).
func (t *terms) begin() time.Duration {
	t.ex.enter()
	prev := t.stepDown.Load()
	if prev == 0 {
		return -1
	}
	return time.Duration(time.Now().UnixNano() - prev)
}

// end records the leader stepping down.
func (t *terms) end() {
	t.ex.leave()
	t.stepDown.Store(time.Now().UnixNano())
}

func (t *terms) note() string {
	if v := t.ex.violations.Load(); v > 0 {
		return fmt.Sprintf("max_simultaneous_leaders>1 (%d overlaps) VIOLATED", v)
	}
	return "max_simultaneous_leaders=1"
}

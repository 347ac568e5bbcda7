package chaos

import (
	"fmt"
	"testing"
	"time"
)

// Scenario 2: restart every server in turn, keeping its data, while the
// recipes run: clients move to the other servers, and no session expires.
func rollingRestart(t *testing.T, e *env) Summary {
	passes := pick(1, 5)
	admin := e.admin(t)
	prog := NewProgress()
	ws := lockLoads(t, e, admin, prog, 4, 10*time.Second)
	stop := runWorkloads(testContext(t, 10*time.Minute), ws)
	defer stop()

	sum := Summary{}
	waitProgress(t, prog, 0)
	for range passes {
		for i := range e.z.Servers() {
			at := prog.Now()
			e.z.Restart(i) // SIGTERM, then the same port and data
			sum.Faults++
			waitProgress(t, prog, at)
			sum.Recovery = max(sum.Recovery, prog.Recovery(at))
			e.healthy(t)
		}
	}
	stop()
	checkWorkloads(t, ws, &sum)
	kept, all := 0, 0
	for _, w := range workersOf(ws) {
		all++
		if w.sessionKept() {
			kept++
		} else {
			t.Errorf("worker %d lost its session during the rolling restart", w.id)
			sum.Violations++
		}
	}
	sum.Held = fmt.Sprintf("%d of %d sessions kept; %s", kept, all, sum.Held)
	return sum
}

// workersOf lists the workers of lock workloads.
func workersOf(ws []workload) []*worker {
	var out []*worker
	for _, w := range ws {
		if l, ok := w.(*lockLoad); ok {
			out = append(out, l.workers...)
		}
	}
	return out
}

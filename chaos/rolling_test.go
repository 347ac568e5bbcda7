package chaos

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// Scenario 2: restart every server in turn, keeping its data, while the
// recipes run: clients move to the other servers, and no session expires.
func rollingRestart(t *testing.T, e *env) Summary {
	return underLoad(t, e, 10*time.Second, true, func(prog *Progress, sum *Summary) {
		for range pick(1, 5) {
			for i := range e.z.Servers() {
				at := prog.Now()
				e.z.Restart(i) // SIGTERM, then the same port and data
				sum.Faults++
				waitProgress(t, prog, at)
				sum.Recovery = max(sum.Recovery, prog.Recovery(at))
				e.healthy(t)
			}
		}
	})
}

// fmtSessions says how many of the workloads' sessions were kept.
func fmtSessions(ws []workload) string {
	kept, all := 0, 0
	for _, w := range workersOf(ws) {
		all++
		if w.sessionKept() {
			kept++
		}
	}
	return fmt.Sprintf("%d of %d sessions kept", kept, all)
}

// workersOf lists the workers of the workloads, each once.
func workersOf(ws []workload) []*worker {
	var out []*worker
	for _, w := range ws {
		for _, k := range w.Workers() {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

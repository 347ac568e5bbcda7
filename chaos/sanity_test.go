package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zkit-dev/zkit/lock"
)

// The pipeline of the scenarios can fail: a lock that does not exclude
// (each worker locks a directory of its own, while they all write to the
// same fence and data node) is caught by the porcupine check and by the
// fence.
func checkerCatchesBrokenLock(t *testing.T, e *env) {
	admin := e.admin(t)
	prog := NewProgress()
	var ws []*worker
	for i := range 3 {
		ws = append(ws, e.worker(t, i, 10*time.Second))
	}
	l := newLockLoad(t, admin, "broken", ws, 0, NewHistory(), prog)
	l.hold = 5 * time.Millisecond
	l.acquire = func(ctx context.Context, w *worker, _ bool) (lease, error) {
		return asLease(lock.New(w.c, fmt.Sprintf("%s-%d", l.dir, w.id)).Lock(ctx))
	}
	stop := runWorkloads(testContext(t, time.Minute), []workload{l})
	waitFor(t, 30*time.Second, "the broken lock is held 100 times", func() bool { return l.acquired.Load() >= 100 })
	stop()
	if res := l.h.Check(LockModel, checkTimeout); res != porcupine.Illegal {
		t.Fatalf("a lock without exclusion passed the check: porcupine %v, fence refused %d", res, l.fence.Refused())
	}
	t.Logf("a lock without exclusion is caught: not linearizable, and the fence refused %d of %d writes",
		l.fence.Refused(), l.fence.Refused()+l.fence.Accepted())
}

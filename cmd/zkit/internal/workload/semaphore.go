package workload

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/semaphore"
)

// SemaphoreMax is the number of leases of W6_semaphore.
const SemaphoreMax = 4

// Semaphore is W6_semaphore on zkit's counting semaphore: clients loop
// acquire then release on one semaphore of SemaphoreMax leases, with
// nothing in between. One operation is one acquisition; its latency runs
// from the start of Acquire until it returns.
func Semaphore() Spec {
	return Spec{Workload: "W6_semaphore", Impl: "zkit.Semaphore", Setup: func(ctx context.Context, p Point) (*Instance, error) {
		cs, path, closeAll, err := connectAt(ctx, p, "semaphore")
		if err != nil {
			return nil, err
		}
		sems := make([]*semaphore.Semaphore, p.Clients)
		for i := range sems {
			sems[i] = semaphore.New(cs[i%len(cs)], path, SemaphoreMax)
		}
		var holders, over atomic.Int64
		return &Instance{
			Op: func(ctx context.Context, i int) (time.Duration, error) {
				t0 := time.Now()
				lease, err := sems[i].Acquire(ctx)
				if err != nil {
					return 0, err
				}
				lat := time.Since(t0)
				if holders.Add(1) > SemaphoreMax {
					over.Add(1)
				}
				holders.Add(-1)
				return lat, lease.Unlock(ctx)
			},
			Check: func(context.Context) []string {
				if v := over.Load(); v > 0 {
					return []string{fmt.Sprintf("max_holders=VIOLATED (%d)", v)}
				}
				return []string{fmt.Sprintf("max_holders=ok (max %d)", SemaphoreMax)}
			},
			Close: closeAll,
		}, nil
	}}
}

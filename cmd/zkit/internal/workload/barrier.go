package workload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/barrier"
)

// hangTimeout is how long one member's enter+leave may take before it is
// counted as hung (the anchors give up after 60 s).
const hangTimeout = 60 * time.Second

// DoubleBarrier is W3_dbarrier on zkit's double barrier: the point's
// clients are the members, and each runs Point.Rounds rounds of Enter then
// Leave, a fresh barrier path per round as in the anchors (Curator's
// barrier serves one round per path). One operation is one round; a
// member's latency sample is its enter+leave. The check counts rounds in
// which a member got through Enter before every member had called it, or
// out of Leave before every member had called it.
func DoubleBarrier() Spec { return doubleBarrier("zkit.DoubleBarrier", false) }

// DoubleBarrierReuse is W3_dbarrier with every round on the same path, as
// zkit's barrier allows (Curator's does not): no barrier directory to
// create per round. Not the anchors' definition; for information.
func DoubleBarrierReuse() Spec { return doubleBarrier("zkit.DoubleBarrier.reuse", true) }

func doubleBarrier(impl string, reuse bool) Spec {
	return Spec{Workload: "W3_dbarrier", Impl: impl, Rounds: true, Clients: 8, Setup: func(ctx context.Context, p Point) (*Instance, error) {
		cs, base, closeAll, err := connectAt(ctx, p, "barrier")
		if err != nil {
			return nil, err
		}
		n := p.Clients
		var (
			mu                sync.Mutex
			entering, leaving = map[int]*atomic.Int32{}, map[int]*atomic.Int32{}
			next              = make([]int, n) // each member's next round
			early, hung       atomic.Int64
			completed         atomic.Int64
		)
		counter := func(m map[int]*atomic.Int32, k int) *atomic.Int32 {
			mu.Lock()
			defer mu.Unlock()
			if m[k] == nil {
				m[k] = new(atomic.Int32)
			}
			return m[k]
		}
		return &Instance{
			Op: func(ctx context.Context, i int) (time.Duration, error) {
				k := next[i]
				next[i]++
				ctx, cancel := context.WithTimeout(ctx, hangTimeout)
				defer cancel()
				path := fmt.Sprintf("%s/r%d", base, k)
				if reuse {
					path = base + "/r"
				}
				d := barrier.NewDouble(cs[i%len(cs)], path, n)
				t0 := time.Now()
				in := counter(entering, k)
				in.Add(1)
				err := d.Enter(ctx)
				if err == nil {
					if in.Load() != int32(n) {
						early.Add(1)
					}
					out := counter(leaving, k)
					out.Add(1)
					err = d.Leave(ctx)
					if err == nil && out.Load() != int32(n) {
						early.Add(1)
					}
				}
				if errors.Is(err, context.DeadlineExceeded) {
					hung.Add(1)
				}
				if err != nil {
					return 0, err
				}
				completed.Add(1)
				return time.Since(t0), nil
			},
			Check: func(context.Context) []string {
				want := int64(n * p.Rounds)
				notes := []string{fmt.Sprintf("member_rounds_completed=%d expected=%d %s (p50/p99 = per-member enter+leave time)",
					completed.Load(), want, okOr(completed.Load() == want, "MISMATCH"))}
				if e := early.Load(); e > 0 {
					notes = append(notes, fmt.Sprintf("thresholds: %d passages before every member had called Enter or Leave VIOLATED", e))
				} else {
					notes = append(notes, "thresholds=ok (nobody through early, nobody out early)")
				}
				if h := hung.Load(); h > 0 {
					notes = append(notes, fmt.Sprintf("HUNG_CLIENTS=%d (gave up after %v)", h, hangTimeout))
				}
				return notes
			},
			Close: closeAll,
		}, nil
	}}
}

func okOr(ok bool, bad string) string {
	if ok {
		return "OK"
	}
	return bad
}

package counter

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// Pacing bounds. See pacer.
const (
	minWindow = 200 * time.Microsecond
	maxWindow = 96 * time.Millisecond
	maxAge    = 10 * time.Second
)

// pacer spaces out one engine's retries under contention, and judges
// whether its view of the node is still worth writing from.
//
// After a conflict the engine waits a random time in its window, which
// doubles with each conflict up to maxWindow and halves with each success:
// contenders spread their attempts out, so that fewer writes fail, while
// nobody waits much longer than maxWindow between attempts. The wait
// shrinks as the batch ages (a batch that has waited for as long as
// maxWindow waits half its window, and so on), so the longest waiters try
// most often: that keeps the tail latency down where a plain exponential
// backoff wins throughput by starving the unlucky.
//
// It also estimates how often other writers change the node (the versions
// that went by between two of the engine's reads). A view older than half
// the expected time between their writes is read again before writing from
// it: a write from a stale view is a wasted write.
type pacer struct {
	window time.Duration
	rate   float64 // other writers' versions per second, smoothed
}

// conflict notes a failed write of a batch that has been trying for
// waited, and sleeps before its next attempt.
func (p *pacer) conflict(ctx context.Context, waited time.Duration) error {
	p.window = min(max(2*p.window, minWindow), maxWindow)
	w := time.Duration(float64(p.window) / (1 + float64(waited)/float64(maxWindow)))
	t := time.NewTimer(w/2 + time.Duration(rand.Int64N(int64(w/2)+1)))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// won notes a successful write.
func (p *pacer) won() { p.window /= 2 }

// observe updates the writers' rate from a read that found st, where the
// view before it was v.
func (p *pacer) observe(v view, st *client.Stat) {
	if !v.known || !v.exists || st.Czxid != v.czxid || st.Version < v.version {
		return
	}
	dt := time.Since(v.at).Seconds()
	if dt <= 0 {
		return
	}
	inst := float64(st.Version-v.version) / dt
	p.rate = 0.7*p.rate + 0.3*inst
}

// stale reports whether v is too old to write from without reading first.
func (p *pacer) stale(v view) bool {
	age := time.Since(v.at)
	if age > maxAge {
		return true
	}
	if p.rate <= 0 {
		return false
	}
	return age.Seconds() > 0.5/p.rate
}

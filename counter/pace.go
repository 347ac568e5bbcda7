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
	maxWindow = 32 * time.Millisecond
	ageScale  = 2 * time.Millisecond
	maxAge    = 10 * time.Second
)

// pacer spaces out one engine's retries when no other writer applies its
// batch (see delegate.go: a set or a compareAndSet, a delta nobody applied
// in time, or a node the client may not create children in), and judges
// whether its view of the node is still worth writing from.
//
// After a conflict the engine waits a random time in the upper half of
// its window, which doubles with each conflict up to maxWindow and halves
// with each success: contenders spread their attempts out, so that fewer
// writes fail. The wait shrinks as the batch ages: a batch that has been
// trying for a while waits its window divided by 1 + waited/ageScale (a
// fifth of it after 8 ms, a sixteenth after 30 ms), so the longest waiters
// try most often: the writer that has just won writes again from the
// version its write returned, without reading, and so wins most races; a
// loser gets in only by trying often once it has waited long.
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
	t := time.NewTimer(p.backoff(waited))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backoff widens the window after a conflict and draws the wait before the
// next attempt of a batch that has been trying for waited.
func (p *pacer) backoff(waited time.Duration) time.Duration {
	p.window = min(max(2*p.window, minWindow), maxWindow)
	w := time.Duration(float64(p.window) / (1 + float64(waited)/float64(ageScale)))
	return w/2 + time.Duration(rand.Int64N(int64(w/2)+1))
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

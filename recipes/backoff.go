package recipes

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is a capped exponential delay with jitter. The zero value starts
// at 10ms and doubles up to 1s.
type Backoff struct {
	Min, Max time.Duration
	next     time.Duration
}

// Next returns the delay to wait before the next attempt: the current step
// with ±25% jitter. The step doubles each call, up to Max.
func (b *Backoff) Next() time.Duration {
	lo, hi := b.Min, b.Max
	if lo <= 0 {
		lo = 10 * time.Millisecond
	}
	if hi < lo {
		hi = max(lo, time.Second)
	}
	if b.next < lo {
		b.next = lo
	}
	d := b.next
	b.next = min(2*b.next, hi)
	return d - d/4 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// Reset starts the delays over from Min.
func (b *Backoff) Reset() { b.next = 0 }

// Wait sleeps for Next, or returns ctx's error if ctx ends first.
func (b *Backoff) Wait(ctx context.Context) error {
	t := time.NewTimer(b.Next())
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

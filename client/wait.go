package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// WaitConnected returns the current session once the client is connected
// with a live session: at once when it is, otherwise when it next is
// (Curator's blockUntilConnected). While the client is between sessions
// (after a loss, for the few hundred milliseconds it takes to open the
// next one) or suspended, it waits within ctx. It returns ctx's error when
// ctx ends first and an error matching ErrClosed once the client is
// closed.
//
// Calls that start something new (acquire a lock, campaign, join, enter a
// barrier) begin with it, so that a call made just after a session change
// waits for the next session instead of failing.
func (c *Client) WaitConnected(ctx context.Context) (*Session, error) {
	for {
		c.mu.Lock()
		closed, sess, changed := c.closed, c.sess, c.changed
		c.mu.Unlock()
		switch {
		case closed:
			return nil, fmt.Errorf("zkit: wait for a session: %w", ErrClosed)
		case sess != nil && sess.Alive() && c.cur.Load() != nil:
			return sess, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// IsTransient reports whether err goes away by itself: the client is
// disconnected, or between two sessions, and will be connected again. A
// call that failed with it may be made again once the client is connected
// (WaitConnected), unless it was a write whose outcome is unknown (see
// IsOutcomeUnknown): those never match. Errors of a closed client never
// match either.
func IsTransient(err error) bool {
	if err == nil || IsOutcomeUnknown(err) || errors.Is(err, ErrClosed) {
		return false
	}
	return IsRetryable(err) || IsSessionLost(err)
}

// Retry calls fn until it returns nil or an error that trying again will
// not cure, and returns that. It is the loop every plain read or
// idempotent write needs: after a transient error (IsTransient) it waits
// until the client is connected again and a short jittered backoff has
// passed, then calls fn again.
//
// It does not retry an error matching ErrOutcomeUnknown: a write cut off
// after it was sent may have been applied, and only the caller knows
// whether applying it twice is harmless. Wrap such a write in fn with the
// check that makes it idempotent, or resolve it by reading back. It
// returns ctx's error (after the last error, when there was one) when ctx
// ends first, and an error matching ErrClosed once the client is closed.
func (c *Client) Retry(ctx context.Context, fn func(ctx context.Context) error) error {
	var b Backoff
	for {
		err := fn(ctx)
		if !IsTransient(err) {
			return err
		}
		if werr := b.Wait(ctx); werr != nil {
			return fmt.Errorf("%w (after %w)", werr, err)
		}
		if _, werr := c.WaitConnected(ctx); werr != nil {
			if errors.Is(werr, ErrClosed) {
				return werr
			}
			return fmt.Errorf("%w (after %w)", werr, err)
		}
	}
}

// Backoff is a capped exponential delay with jitter, for loops that try
// again. The zero value starts at 10ms and doubles up to 1s.
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

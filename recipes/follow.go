package recipes

import (
	"context"
	"errors"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// ReadFunc reads one piece of ZooKeeper state and leaves a one-shot watch
// (or several, merged into one channel) that fires when it may have
// changed. It is what Follow calls again and again.
type ReadFunc[T any] func(ctx context.Context) (T, <-chan client.WatchEvent, error)

// Feed is the stream of values Follow produces, and what every zkit
// observer returns (election.Observe, membership's and rendezvous' Watch,
// configwatch's Watch): part of the public API. Read Values until it is
// closed, then Err says why it ended. Cancel the context given to the
// observer to stop it.
type Feed[T any] struct {
	values chan T
	err    error // set before values is closed
}

// Values delivers the state as it changes. It holds at most one value, the
// latest: a slow receiver skips intermediate values but always ends up
// with the current state. It is closed when following stops; Err then
// tells why.
func (f *Feed[T]) Values() <-chan T { return f.values }

// Err is nil while Values is open, then the reason following stopped:
// the context's error, or the first error of read that retrying cannot
// cure (an input error, no permission, ...).
func (f *Feed[T]) Err() error { return f.err }

// Follow is the level-triggered watch every zkit observer is built on
// (leader observation, group membership, configuration). It calls read,
// sends the value on Values unless equal says it is the one sent last
// (nil equal: every value is sent), waits for read's watch to fire, and
// reads again, until ctx ends.
//
// Watches are one-shot and ZooKeeper does not replay what happened while
// no watch was set, so Follow never trusts an event alone: it reads the
// state again after every watch event, after every reconnect, and under
// every new session, so that the last value delivered is always the
// current one. It reads again, too, after it fell behind the client's
// events (client.ErrSubscriptionOverflow: a reconnect may have been
// among those dropped), and subscribes again. Errors that go away by
// themselves (connection loss, a session being replaced) are retried
// after a short backoff; the feed stops on any other error.
func Follow[T any](ctx context.Context, c *client.Client, read ReadFunc[T], equal func(a, b T) bool) *Feed[T] {
	f := &Feed[T]{values: make(chan T)}
	sub := c.Subscribe() // before the first read: no reconnect is missed
	go func() {
		defer close(f.values)
		f.err = f.run(ctx, c, sub, read, equal)
	}()
	return f
}

// follower is the state of one Follow loop.
type follower[T any] struct {
	feed    *Feed[T]
	c       *client.Client
	sub     *client.Subscription // replaced when it overflows
	equal   func(a, b T) bool
	last    T    // the value the receiver has, if sent
	sent    bool // something was delivered
	pending T    // the value to deliver, if waiting
	waiting bool
}

func (f *Feed[T]) run(ctx context.Context, c *client.Client, sub *client.Subscription, read ReadFunc[T], equal func(a, b T) bool) error {
	fl := &follower[T]{feed: f, c: c, sub: sub, equal: equal}
	defer func() { fl.sub.Close() }()
	var b client.Backoff
	for {
		v, watch, err := read(ctx)
		var retry <-chan struct{}
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && !transient(err):
			return err
		case err != nil:
			retry = afterBackoff(&b)
		default:
			b.Reset()
			fl.offer(v)
		}
		if !fl.wait(ctx, watch, retry) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return client.ErrClosed
		}
	}
}

// offer makes v the value to deliver, unless the receiver has it already.
func (fl *follower[T]) offer(v T) {
	if fl.sent && fl.equal != nil && fl.equal(v, fl.last) {
		var zero T
		fl.pending, fl.waiting = zero, false
		return
	}
	fl.pending, fl.waiting = v, true
}

// wait delivers the pending value while it waits for a reason to read
// again: the watch fired, the retry delay passed, the connection came
// back, or the subscription overflowed (subscribed again). It returns
// false when following must stop.
func (fl *follower[T]) wait(ctx context.Context, watch <-chan client.WatchEvent, retry <-chan struct{}) bool {
	for {
		var out chan T
		if fl.waiting {
			out = fl.feed.values
		}
		select {
		case out <- fl.pending:
			var zero T
			fl.last, fl.sent = fl.pending, true
			fl.pending, fl.waiting = zero, false
		case <-watch:
			return true
		case <-retry:
			return true
		case ev, ok := <-fl.sub.Events():
			switch {
			case !ok && errors.Is(fl.sub.Err(), client.ErrSubscriptionOverflow):
				fl.sub.Close()
				fl.sub = fl.c.Subscribe() // before the read, as at first
				return true
			case !ok || ev.State == client.StateClosed:
				return false
			case ev.State == client.StateConnected, ev.State == client.StateReconnected:
				return true
			}
		case <-ctx.Done():
			return false
		}
	}
}

// transient reports whether a read error goes away by itself: the
// connection or the session is being replaced.
func transient(err error) bool {
	return client.IsRetryable(err) || (client.IsSessionLost(err) && !errors.Is(err, client.ErrClosed))
}

// afterBackoff returns a channel closed after b's next delay. The delay is
// taken here, on the loop's goroutine, which also resets b.
func afterBackoff(b *client.Backoff) <-chan struct{} {
	ch := make(chan struct{})
	time.AfterFunc(b.Next(), func() { close(ch) })
	return ch
}

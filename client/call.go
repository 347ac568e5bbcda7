package client

import (
	"context"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// errNotConnected refuses a call made while the client has no connection:
// it fails at once with a retryable error instead of waiting in
// go-zookeeper's queue for a reconnect (see reconnect.go for why a queued
// request is a hazard).
var errNotConnected = fmt.Errorf("not connected: %w", ErrNoServer)

// notSent wraps the error of a call whose request never reached the
// server: the context ended before the request was handed to the wire
// client or written, or the connection broke before the request was wholly
// written. Even a write has a known outcome then (not applied).
type notSent struct{ err error }

func (e notSent) Error() string { return e.err.Error() }
func (e notSent) Unwrap() error { return e.err }

// settleGrace bounds the wait, after a connection was lost and the wire
// client settled its calls, for a call's answer to reach its caller.
const settleGrace = 100 * time.Millisecond

// do runs a blocking wire-client call on the current connection: AddAuth,
// and the creation of the namespace at Connect (every other call is direct,
// see direct.go). It returns early with ctx's error when ctx ends first
// (wrapped in notSent when the call was not handed to the wire client yet).
// When that connection is lost, it waits until the wire client has settled
// the calls sent on it (a reply that arrived wins), then returns
// ErrConnectionClosed for a call still in the send queue. In both cases
// the call itself runs on until the wire client answers or drops it, and
// its result is then discarded: one still queued goes out on the next
// connection of the session (the wire client fails it only when the
// session expired or the client is closed), so it may take effect after
// its caller was told it failed. Only calls that may be applied twice go
// through do.
//
// r names the call: its error is classified (see classify) and recorded.
func do[T any](ctx context.Context, c *Client, r request, fn func() (T, error)) (T, error) {
	start := time.Now()
	v, raw := run(ctx, c, fn)
	return v, c.settle(r, start, raw)
}

// doDirect is do for a direct call (see direct.go): fn writes the request and
// waits for its reply itself, on the caller's goroutine.
func doDirect[T any](c *Client, r request, fn func() (T, error)) (T, error) {
	start := time.Now()
	v, raw := fn()
	return v, c.settle(r, start, raw)
}

// settle classifies and records the outcome of call r, started at start.
func (c *Client) settle(r request, start time.Time, raw error) error {
	err := classify(r.op, r.path, r.write, raw)
	c.tel.request(r.op, start, outcome(raw, err))
	return err
}

// request names a call: its operation, the caller's path, and whether it
// changes state (a write cut off has an unknown outcome).
type request struct {
	op, path string
	write    bool
}

// run is do without the naming.
func run[T any](ctx context.Context, c *Client, fn func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, notSent{err}
	}
	if c.life.Err() != nil {
		return zero, ErrClosed // not the wire client's "connection closed"
	}
	link := c.link.Load()
	if link == nil {
		return zero, errNotConnected
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	c.pending.Add(1)
	c.workers.run(func() {
		v, err := fn()
		c.pending.Add(-1)
		ch <- result{v, err}
	})
	select {
	case r := <-ch:
		return r.v, c.closing(r.err)
	case <-ctx.Done():
		select {
		case r := <-ch: // answered at the same moment: the answer wins
			return r.v, c.closing(r.err)
		default:
			return zero, ctx.Err()
		}
	case <-link.lost:
		// Every call sent on the lost connection has its reply or its
		// error by now; give its goroutine a moment to hand it over. A
		// call still unanswered after that is in the send queue, to go
		// out on the next connection.
		t := time.NewTimer(settleGrace)
		defer t.Stop()
		select {
		case r := <-ch:
			return r.v, c.closing(r.err)
		case <-ctx.Done():
			return zero, ctx.Err()
		case <-t.C:
			return zero, c.closing(ErrConnectionClosed)
		}
	}
}

// fromWireClient turns go-zookeeper's error for a call into the client's.
func fromWireClient(err error) error {
	switch err {
	case zk.ErrConnectionClosed:
		return ErrConnectionClosed
	case zk.ErrClosing:
		return ErrClosed
	case zk.ErrNoServer:
		return ErrNoServer
	case zk.ErrAuthFailed:
		return ErrAuthFailed
	case zk.ErrSessionExpired:
		return ErrSessionExpired
	}
	return err
}

// closing returns err, the wire client's error for a call, unless the
// client was closed and err is the connection's: then the client's
// closing ended the call, and it fails with ErrClosed (ErrClosed), as
// a direct call cut off by Close does (see pending.wait).
func (c *Client) closing(err error) error {
	if c.life.Err() != nil && (err == ErrConnectionClosed || isTransport(err)) {
		return ErrClosed
	}
	return err
}

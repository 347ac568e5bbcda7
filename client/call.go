package client

import (
	"fmt"
	"time"
)

// errNotConnected refuses a call made while the client has no connection:
// it fails at once with a retryable error instead of waiting for a
// reconnect.
var errNotConnected = fmt.Errorf("not connected: %w", ErrNoServer)

// notSent wraps the error of a call whose request never reached the
// server: the context ended before the request was written, or the
// connection ended or broke before the request was wholly written. Even a
// write has a known outcome then (not applied).
type notSent struct{ err error }

func (e notSent) Error() string { return e.err.Error() }
func (e notSent) Unwrap() error { return e.err }

// doDirect runs call r: fn writes the request and waits for its reply
// (see direct.go), on the caller's goroutine. Its error is classified
// (see classify) and recorded.
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

package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Watches across connections.
//
// A ZooKeeper watch lives on the server for as long as the session, but a
// client has to set it again on each new connection (SetWatches, carrying
// the last zxid the client saw, so that the server fires the watches whose
// node changed meanwhile). go-zookeeper 1.0.4 does that, but it keeps the
// last zxid in a field its receive loop writes for every reply while its
// connection loop reads it for SetWatches and the connect request, without
// synchronisation: a data race (go-zookeeper/zk#35) that `go test -race`
// reports in any program that reconnects with watches set.
//
// zkit takes the last zxid off the receive loop instead: the connection
// wrapper (sniffConn) reads every reply's zxid on its way in, keeps the
// highest, and hands the wire client the reply with a zxid of 0, which it
// ignores; it writes the zxid zkit kept into the connect request and into
// SetWatches on their way out (the zxid the last connection ended at).
// The wire client's field is then written only by its connection loop,
// the goroutine that reads it, and the watches keep ZooKeeper's own
// semantics across reconnects.

// wireSlack is what a frame may add to the server's request limit.
const wireSlack = 64 * 1024

// watched is what a watching call returns: its value, the node's Stat
// and zkit's one-shot watch channel.
type watched[T any] struct {
	v    T
	stat *Stat
	ch   <-chan WatchEvent
}

// watch runs a watching wire call, and hands its channel to forward where
// the wire call returns, even for a call whose caller has gone (the wire
// client set the watch anyway).
func watch[T any](ctx context.Context, c *Client, r request, call func() (T, *Stat, <-chan zk.Event, error)) (watched[T], error) {
	return do(ctx, c, r, func() (watched[T], error) {
		v, st, ch, err := call()
		return watched[T]{v, st, c.forward(ch)}, err
	})
}

// forward turns the wire client's one-shot watch channel into zkit's. A
// nil channel (no watch was set) stays nil.
func (c *Client) forward(in <-chan zk.Event) <-chan WatchEvent {
	if in == nil {
		return nil
	}
	out := make(chan WatchEvent, 1)
	go func() {
		ev, ok := <-in
		if !ok {
			ev = zk.Event{Type: zk.EventNotWatching, Err: ErrClosed}
		}
		we := WatchEvent{Type: EventType(ev.Type), Path: c.rel(ev.Path), Err: ev.Err}
		switch {
		case we.Type != EventNotWatching:
		case we.Err == nil:
			we.Err = ErrSessionLost
		case errors.Is(we.Err, zk.ErrSessionExpired):
			// What the wire client tells every watch when the session
			// expires: it is the session's loss, as Session.Err says.
			we.Err = fmt.Errorf("%w: %w", ErrSessionLost, we.Err)
		}
		out <- we
		close(out)
	}()
	return out
}

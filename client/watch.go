package client

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"

	"github.com/go-zookeeper/zk"
)

// Watches across connections.
//
// A ZooKeeper watch lives on the server for as long as the session, but a
// client has to set it again on each new connection (SetWatches, carrying
// the last zxid the client saw, so that the server fires the watches whose
// node changed meanwhile). go-zookeeper 1.0.4 sends that request while its
// receive loop, already running, may be answering another call: its read
// of the last zxid races with the loop's write of it (go-zookeeper/zk#35),
// which `go test -race` reports in any program that reconnects with
// watches set.
//
// So zkit never lets go-zookeeper carry a watch across connections. Every
// watch is registered here before its request is sent. When a connection
// ends, the client's connection wrapper (sniffConn.Read) hands the wire
// client one more frame per watched path, after everything the server
// sent: a watch event marked as dropped, which makes the wire client
// remove its watches on that path (on the next connection it then has
// none to set again, and never reads the last zxid). The goroutine that
// forwards the watch to zkit's caller sees the mark and sets the watch
// again itself once the client is connected: it reads the node with a
// watch, as the first call did, and compares the node's Stat with the one
// the watch was set against. If the node changed meanwhile it delivers the
// event the server would have sent (created, deleted, data or children
// changed); otherwise the new watch takes over, unseen by the caller. A
// watch whose session was lost meanwhile delivers EventNotWatching.

// watchKind is which one-shot watch a call set.
type watchKind int

const (
	dataWatch  watchKind = iota // getData: data changed or node deleted
	existWatch                  // exists: created, data changed or deleted
	childWatch                  // getChildren: children changed or node deleted
)

// stateDropped marks the events sniffConn makes up: a real watch event
// from the server always carries SyncConnected (3).
const stateDropped = zk.State(-99)

// wireSlack is what a frame may add to the server's request limit.
const wireSlack = 64 * 1024

// watchReg is one watch, registered from before its request is sent until
// the wire client no longer holds it.
type watchReg struct {
	path string
	kind watchKind
	sess *Session // the session the watch was set in
}

// watchRegistry holds the watches the wire client may hold.
type watchRegistry struct {
	mu   sync.Mutex
	regs map[*watchReg]struct{}
}

func (w *watchRegistry) add(r *watchReg) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.regs == nil {
		w.regs = map[*watchReg]struct{}{}
	}
	w.regs[r] = struct{}{}
}

func (w *watchRegistry) remove(r *watchReg) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.regs, r)
}

// dropWatchFrames returns the made-up watch events that make the wire
// client drop every watch it may hold: NodeDeleted on each watched path
// removes its data, exist and child watches alike.
func (c *Client) dropWatchFrames() []byte {
	c.watches.mu.Lock()
	defer c.watches.mu.Unlock()
	dropped := int32(stateDropped)
	seen := map[string]bool{}
	var out []byte
	for r := range c.watches.regs {
		if seen[r.path] {
			continue
		}
		seen[r.path] = true
		// Reply header: xid -1 (a watch event), zxid 0, err 0; then the
		// event: type, state, path.
		size := 4 + 8 + 4 + 4 + 4 + 4 + len(r.path)
		out = binary.BigEndian.AppendUint32(out, uint32(size))
		out = binary.BigEndian.AppendUint32(out, 0xffffffff)
		out = binary.BigEndian.AppendUint64(out, 0)
		out = binary.BigEndian.AppendUint32(out, 0)
		out = binary.BigEndian.AppendUint32(out, uint32(zk.EventNodeDeleted))
		out = binary.BigEndian.AppendUint32(out, uint32(dropped))
		out = binary.BigEndian.AppendUint32(out, uint32(len(r.path)))
		out = append(out, r.path...)
	}
	return out
}

// watched is what a watching call returns: its value, the node's Stat
// and zkit's one-shot watch channel.
type watched[T any] struct {
	v    T
	stat *Stat
	ch   <-chan WatchEvent
}

// watch runs a watching wire call. The watch is registered before the
// request is sent, and handed to forward where the wire call returns, even
// for a call whose caller has gone (the wire client set the watch anyway).
// exists reports whether the node existed, as the watch saw it.
func watch[T any](ctx context.Context, c *Client, r request, kind watchKind,
	call func() (T, *Stat, <-chan zk.Event, error), exists func(T, *Stat) bool) (watched[T], error) {
	return do(ctx, c, r, func() (watched[T], error) {
		reg := &watchReg{path: c.abs(r.path), kind: kind, sess: c.Session()}
		c.watches.add(reg)
		v, st, ch, err := call()
		var seen *Stat
		if err == nil && exists(v, st) {
			seen = st
		}
		return watched[T]{v, st, c.forward(reg, seen, ch)}, err
	})
}

// forward turns the wire client's one-shot watch channel into zkit's, and
// sets the watch again when the wire client dropped it with a connection
// (see above). seen is the node's Stat when the watch was set, nil when
// the node did not exist. A nil channel (no watch was set) stays nil.
func (c *Client) forward(reg *watchReg, seen *Stat, in <-chan zk.Event) <-chan WatchEvent {
	if in == nil {
		c.watches.remove(reg)
		return nil
	}
	out := make(chan WatchEvent, 1)
	go func() {
		defer c.watches.remove(reg)
		delivered := false
		deliver := func(we WatchEvent) {
			if !delivered {
				delivered = true
				out <- we
				close(out)
			}
		}
		for {
			ev, ok := <-in
			switch {
			case !ok:
				deliver(WatchEvent{Type: EventNotWatching, Path: c.rel(reg.path), Err: ErrClosed})
				return
			case ev.State != stateDropped:
				we := WatchEvent{Type: EventType(ev.Type), Path: c.rel(ev.Path), Err: ev.Err}
				if we.Type == EventNotWatching && we.Err == nil {
					we.Err = ErrSessionLost
				}
				deliver(we)
				return
			case delivered:
				return // a watch set again after it had fired: nobody waits
			}
			var fired WatchEvent
			in, seen, fired = c.rearm(reg, seen)
			if fired.Type != EventNone {
				deliver(fired)
			}
			if in == nil {
				return
			}
		}
	}()
	return out
}

// rearm sets reg's watch again once the client is connected in the
// watch's session, and returns the wire client's new channel (nil if no
// watch was set), the node's Stat now, and the event the watch would have
// fired with since seen (EventNone: none).
func (c *Client) rearm(reg *watchReg, seen *Stat) (<-chan zk.Event, *Stat, WatchEvent) {
	notWatching := func(err error) (<-chan zk.Event, *Stat, WatchEvent) {
		return nil, nil, WatchEvent{Type: EventNotWatching, Path: c.rel(reg.path), Err: err}
	}
	var b Backoff
	for {
		changed := c.Changed()
		switch {
		case c.life.Err() != nil:
			return notWatching(ErrClosed)
		case reg.sess == nil || !reg.sess.Alive():
			cause := ErrSessionLost
			if reg.sess != nil && reg.sess.Err() != nil {
				cause = reg.sess.Err()
			}
			return notWatching(cause)
		case c.Session() != reg.sess || c.link.Load() == nil:
			select {
			case <-changed:
			case <-reg.sess.Done():
			case <-c.life.Done():
			}
			continue
		}
		in, now, err := c.reread(reg)
		switch {
		case err == nil:
			return in, now, WatchEvent{Type: change(reg.kind, seen, now), Path: c.rel(reg.path)}
		case !IsTransient(err):
			return notWatching(err)
		}
		if b.Wait(c.life) != nil {
			return notWatching(ErrClosed)
		}
	}
}

// reread sets reg's watch again: the node's Stat (nil: it does not exist)
// and the wire client's channel (nil: no watch was set, the node is gone).
func (c *Client) reread(reg *watchReg) (<-chan zk.Event, *Stat, error) {
	type result struct {
		ch <-chan zk.Event
		st *Stat
	}
	r, err := run(c.life, c, func() (result, error) {
		switch reg.kind {
		case existWatch:
			ok, st, ch, err := c.conn.ExistsW(reg.path)
			if !ok {
				st = nil
			}
			return result{ch, st}, err
		case childWatch:
			_, st, ch, err := c.conn.ChildrenW(reg.path)
			return result{ch, st}, err
		}
		_, st, ch, err := c.conn.GetW(reg.path)
		return result{ch, st}, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, nil
	}
	return r.ch, r.st, classify("watch", reg.path, false, err)
}

// change is the event a watch of kind set when the node's Stat was seen
// (nil: absent) fires with when it is now now: EventNone when it would
// not have fired.
func change(kind watchKind, seen, now *Stat) EventType {
	switch {
	case seen == nil && now == nil:
		return EventNone
	case seen == nil:
		return EventNodeCreated
	case now == nil, now.Czxid != seen.Czxid:
		return EventNodeDeleted
	case kind == childWatch && now.Pzxid != seen.Pzxid:
		return EventNodeChildrenChanged
	case kind != childWatch && now.Mzxid != seen.Mzxid:
		return EventNodeDataChanged
	}
	return EventNone
}

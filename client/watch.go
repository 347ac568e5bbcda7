package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Watches.
//
// A ZooKeeper watch is one-shot: the server fires it once, with an event
// frame (xid -1) on the connection that set it, and only after the reply to
// the call that set it. The server keeps a session's watches per
// connection, so a client sets them again on each new connection of the
// same session (SetWatches, with the last zxid it saw: the server then fires
// at once the watches whose node changed after that zxid).
//
// The client keeps its watches in a watchSet. The watching calls (GetW,
// ExistsW, ChildrenW) are calls like any other (direct.go): the reading
// goroutine files a watch when it reads the reply that set it, before any
// later frame, and delivers an event onto the watch's channel (buffered:
// nothing waits, and no goroutine runs per watch).
//
// On a new connection of the same session, the client writes SetWatches
// right after the credentials, before any call (conn.prime): ZooKeeper's
// own client's order. The order matters. A watch set by a request on the
// new connection must not be in SetWatches: the server would compare its
// node with the zxid the last connection ended at, and fire at once for a
// node created or written since, a NodeDataChanged nobody caused (a lock
// waiter takes it for the release of the node ahead of it). The watches to
// set again are taken before the connection takes any call, so none set on
// it can be among them.
//
// A watch ends without firing, with EventNotWatching, when its session
// ends: the server reported the session expired, or zkit declared it lost
// (disconnected for longer than its timeout, or the server gave a new
// session). WatchEvent.Err then matches ErrSessionLost (and
// ErrSessionExpired for an expiry). When the client is closed, it matches
// ErrClosed.

// watchKind is the kind of a watch, as the server files it.
type watchKind uint8

const (
	kindData  watchKind = iota // getData, or exists on a node that exists
	kindExist                  // exists on a node that does not
	kindChild                  // getChildren
)

type watchKey struct {
	path string // as on the wire
	kind watchKind
}

// kindOf returns the kind of watch the server set for a watching call of
// op answered with code, or false when it set none.
func kindOf(op, code int32) (watchKind, bool) {
	switch {
	case code == 0 && (op == jute.OpGetChildren || op == jute.OpGetChildren2):
		return kindChild, true
	case code == 0:
		return kindData, true
	case op == jute.OpExists && code == int32(jute.ErrNoNode):
		return kindExist, true
	}
	return 0, false
}

// firedKinds are the kinds of watch an event of type typ fires.
func firedKinds(typ EventType) []watchKind {
	switch typ {
	case EventNodeCreated:
		return []watchKind{kindExist}
	case EventNodeDataChanged:
		return []watchKind{kindExist, kindData}
	case EventNodeChildrenChanged:
		return []watchKind{kindChild}
	case EventNodeDeleted:
		return []watchKind{kindExist, kindData, kindChild}
	}
	return nil
}

// errNewSession is why a session ends when the server gave a new one.
var errNewSession = fmt.Errorf("%w: server gave a new session", ErrSessionLost)

// watchSet is a client's watches.
type watchSet struct {
	rel func(string) string // the caller's path for a path on the wire

	mu      sync.Mutex
	session int64                            // the session the watches were set in
	closed  bool                             // the client is closed: no more watches
	keys    map[watchKey][]chan<- WatchEvent // each channel buffered, filed once
}

// file files the watch that a watching call of op on path, answered with
// code on a connection of session, set; ch receives its event.
func (w *watchSet) file(session int64, op int32, path string, code int32, ch chan<- WatchEvent) {
	kind, ok := kindOf(op, code)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		notWatching(ch, ErrClosed)
		return
	case session != w.session:
		notWatching(ch, ErrSessionLost)
		return
	}
	if w.keys == nil {
		w.keys = make(map[watchKey][]chan<- WatchEvent)
	}
	k := watchKey{path, kind}
	w.keys[k] = append(w.keys[k], ch)
}

// fire delivers an event frame's event (b after the reply header) to the
// watches it fires.
func (w *watchSet) fire(b []byte) {
	var ev jute.WatcherEvent
	if jute.Decode(b, &ev) != nil {
		return
	}
	typ := EventType(ev.Type)
	var fired []chan<- WatchEvent
	w.mu.Lock()
	for _, kind := range firedKinds(typ) {
		k := watchKey{ev.Path, kind}
		fired = append(fired, w.keys[k]...)
		delete(w.keys, k)
	}
	w.mu.Unlock()
	for _, ch := range fired {
		ch <- WatchEvent{Type: typ, Path: w.rel(ev.Path)}
		close(ch)
	}
}

// resume is called with the connect response of a connection of session,
// and returns the watches to set again on it. A new session ends the
// watches of the one before.
func (w *watchSet) resume(session int64) []watchKey {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	if session != w.session {
		w.endLocked(errNewSession)
		w.session = session
		return nil
	}
	keys := make([]watchKey, 0, len(w.keys))
	for k := range w.keys {
		keys = append(keys, k)
	}
	return keys
}

// lose ends the watches of session, with cause: the client declared it
// lost. (Should the server still resume it on a connection being opened at
// that moment, the client drops that connection and asks for a new session:
// see onEvent.)
func (w *watchSet) lose(session int64, cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if session == w.session {
		w.endLocked(cause)
	}
}

// expired ends the watches: the server reported their session expired.
func (w *watchSet) expired() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.endLocked(fmt.Errorf("%w: %w", ErrSessionLost, ErrSessionExpired))
}

// close ends every watch for good: the client is closed.
func (w *watchSet) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.endLocked(ErrClosed)
}

func (w *watchSet) endLocked(err error) {
	for k, chans := range w.keys {
		for _, ch := range chans {
			notWatching(ch, err)
		}
		delete(w.keys, k)
	}
}

// notWatching tells a watch that it ended without firing.
func notWatching(ch chan<- WatchEvent, err error) {
	ch <- WatchEvent{Type: EventNotWatching, Err: err}
	close(ch)
}

// setWatchesLimit bounds the paths of one SetWatches request, as
// ZooKeeper's client does (the server refuses requests over its
// jute.maxbuffer, 1 MiB by default).
const setWatchesLimit = 128 << 10

// setWatchesFrames returns the SetWatches requests that set keys again
// relative to zxid, with xid -8 as ZooKeeper's client sends them.
func setWatchesFrames(keys []watchKey, zxid int64) [][]byte {
	var frames [][]byte
	// Empty lists, not null ones: a server stops at a null list (ZooKeeper
	// with a NullPointerException, answered MarshallingError) and sets
	// none of the watches after it.
	empty := func() jute.SetWatches {
		return jute.SetWatches{RelativeZxid: zxid, DataWatches: []string{}, ExistWatches: []string{}, ChildWatches: []string{}}
	}
	sw, size := empty(), 0
	flush := func() {
		h := jute.RequestHeader{Xid: jute.XidSetWatches, Type: jute.OpSetWatches}
		frames = append(frames, jute.Frame(&h, &sw))
		sw, size = empty(), 0
	}
	for _, k := range keys {
		if size > 0 && size+len(k.path) > setWatchesLimit {
			flush()
		}
		switch k.kind {
		case kindData:
			sw.DataWatches = append(sw.DataWatches, k.path)
		case kindExist:
			sw.ExistWatches = append(sw.ExistWatches, k.path)
		case kindChild:
			sw.ChildWatches = append(sw.ChildWatches, k.path)
		}
		size += len(k.path) + 4
	}
	if size > 0 {
		flush()
	}
	return frames
}

// watchCall makes a watching call of op on path (as on the wire; its
// request's watch flag set) and returns the watch's channel when the
// server set one, with the call's error: ExistsW's ErrNoNode comes with a
// channel.
func watchCall(ctx context.Context, c *Client, op int32, path string, req, resp any) (<-chan WatchEvent, error) {
	ch := make(chan WatchEvent, 1)
	p, err := beginWatch(ctx, c, op, req, watchReg{ch, path})
	if err != nil {
		return nil, err
	}
	_, err = p.wait(ctx, resp)
	if errors.Is(err, ErrNoNode) && op == jute.OpExists {
		return ch, err
	}
	if err != nil {
		return nil, err
	}
	return ch, nil
}

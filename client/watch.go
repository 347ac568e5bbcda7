package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
// ErrClosed. RemoveWatches ends the watches it removes with ErrWatchRemoved.
//
// Persistent watches (Watch, addWatch: ZooKeeper 3.6 and later) live in the
// same registry, by path, with the feeds that receive their events (see
// feed.go for the rules they follow on the server).

// watchKind is the kind of a watch, as the server files it.
type watchKind uint8

const (
	kindData      watchKind = iota // getData, or exists on a node that exists
	kindExist                      // exists on a node that does not
	kindChild                      // getChildren
	kindPersist                    // addWatch, persistent (SetWatches2 only)
	kindRecursive                  // addWatch, persistent recursive (SetWatches2 only)
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
	// unwatch removes, in the background, the server's watches on the
	// path of a transition begun for it, which no feed, watch or watching
	// call needs any more (feed.go). Called without mu held; nil: never.
	unwatch func(*transition)
	// overflowed counts a feed ended by its reader's falling behind.
	overflowed func()

	mu       sync.Mutex
	session  int64                            // the session the watches were set in
	closed   bool                             // the client is closed: no more watches
	keys     map[watchKey][]chan<- WatchEvent // each channel buffered, filed once
	persist  map[string]*persisted            // persistent watches, by path (feed.go)
	pins     map[string]int                   // watching calls under way, by path
	changing map[string]*transition           // an addWatch or removeWatches under way, by path
}

// file files the watch that a watching call of op on path, answered with
// code on a connection of session, set; ch receives its event. A call
// sent covered (without its watch flag: a persistent watch on the path
// reports everything its watch would, see feed.go) set nothing on the
// server: its watch is the persistent one's, and ends at once if that one
// was removed meanwhile.
func (w *watchSet) file(session int64, op int32, path string, code int32, ch chan<- WatchEvent, covered bool) {
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
	case covered && !w.coversLocked(path, kind):
		notWatching(ch, ErrWatchRemoved)
		return
	}
	if w.keys == nil {
		w.keys = make(map[watchKey][]chan<- WatchEvent)
	}
	k := watchKey{path, kind}
	w.keys[k] = append(w.keys[k], ch)
}

// fire delivers an event frame's event (b after the reply header) to the
// watches and feeds it fires; zxid is the event's (WatchEvent.Zxid).
func (w *watchSet) fire(b []byte, zxid int64) {
	var ev jute.WatcherEvent
	if jute.Decode(b, &ev) != nil {
		return
	}
	typ := EventType(ev.Type)
	var fired, parents []chan<- WatchEvent
	w.mu.Lock()
	for _, kind := range firedKinds(typ) {
		k := watchKey{ev.Path, kind}
		fired = append(fired, w.keys[k]...)
		delete(w.keys, k)
	}
	parent := parentPath(ev.Path)
	if w.childrenSynthesizedLocked(parent) && (typ == EventNodeCreated || typ == EventNodeDeleted) {
		// A child came or went under a recursive watch (see feed.go).
		k := watchKey{parent, kindChild}
		parents = w.keys[k]
		delete(w.keys, k)
	}
	unwatch := w.feedLocked(typ, ev.Path, zxid)
	w.mu.Unlock()
	for _, ch := range fired {
		ch <- WatchEvent{Type: typ, Path: w.rel(ev.Path), Zxid: zxid}
		close(ch)
	}
	for _, ch := range parents {
		ch <- WatchEvent{Type: EventNodeChildrenChanged, Path: w.rel(parent), Zxid: zxid}
		close(ch)
	}
	w.unwatchAll(unwatch)
}

// resume is called with the connect response of a connection of session,
// and returns the watches to set again on it. A new session ends the
// watches of the one before. The feeds of the same session are told to
// read again what they follow: the server does not replay what changed
// while the client was away.
func (w *watchSet) resume(session int64) []watchKey {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.releaseAllLocked() // the calls under way went with the last connection
	if w.closed {
		return nil
	}
	if session != w.session {
		w.endLocked(errNewSession)
		w.session = session
		return nil
	}
	keys := make([]watchKey, 0, len(w.keys)+len(w.persist))
	for k := range w.keys {
		keys = append(keys, k)
	}
	return append(keys, w.resumeFeedsLocked()...)
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
	w.endFeedsLocked(err)
	w.releaseAllLocked()
}

// notWatching tells a watch that it ended without firing.
func notWatching(ch chan<- WatchEvent, err error) {
	ch <- WatchEvent{Type: EventNotWatching, Err: err}
	close(ch)
}

// pin readies a watching call of kind on path: it waits while an addWatch
// or removeWatches of path is under way (their order with the call must be
// the server's), and reports whether a persistent watch on path covers the
// call (it is then sent without its watch flag). The call holds the path
// until release runs: no persistent watch is removed under it.
func (w *watchSet) pin(ctx context.Context, path string, kind watchKind) (covered bool, release func(), err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.settleLocked(ctx, path); err != nil {
		return false, nil, err
	}
	if w.pins == nil {
		w.pins = make(map[string]int)
	}
	w.pins[path]++
	var once sync.Once
	release = func() {
		once.Do(func() {
			w.mu.Lock()
			if w.pins[path]--; w.pins[path] <= 0 {
				delete(w.pins, path)
			}
			w.mu.Unlock()
		})
	}
	return w.coversLocked(path, kind), release, nil
}

// transition is an addWatch or removeWatches of one path under way.
type transition struct {
	path string
	done chan struct{}
}

// settleLocked waits, with mu held (and released while waiting), until no
// transition of path is under way.
func (w *watchSet) settleLocked(ctx context.Context, path string) error {
	for {
		t := w.changing[path]
		if t == nil {
			return nil
		}
		w.mu.Unlock()
		select {
		case <-t.done:
		case <-ctx.Done():
			w.mu.Lock()
			return ctx.Err()
		}
		w.mu.Lock()
	}
}

// begin starts a transition of path, once no other is under way; end it
// with release.
func (w *watchSet) begin(ctx context.Context, path string) (*transition, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.settleLocked(ctx, path); err != nil {
		return nil, err
	}
	return w.beginLocked(path), nil
}

func (w *watchSet) beginLocked(path string) *transition {
	t := &transition{path: path, done: make(chan struct{})}
	if w.changing == nil {
		w.changing = make(map[string]*transition)
	}
	w.changing[path] = t
	return t
}

// release ends transition t, if it has not ended yet.
func (w *watchSet) release(t *transition) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.releaseLocked(t)
}

func (w *watchSet) releaseLocked(t *transition) {
	if w.changing[t.path] == t {
		delete(w.changing, t.path)
		close(t.done)
	}
}

// releaseAllLocked ends every transition: its call went with its
// connection or its session.
func (w *watchSet) releaseAllLocked() {
	for _, t := range w.changing {
		w.releaseLocked(t)
	}
}

// removed ends, on the reply to a removeWatches of path and typ, the
// watches the server removed: those filed before the reply, that is, set
// by calls the server processed before the removal.
func (w *watchSet) removed(path string, typ WatchType) {
	var kinds []watchKind
	switch typ {
	case DataWatches:
		kinds = []watchKind{kindData, kindExist}
	case ChildWatches:
		kinds = []watchKind{kindChild}
	default:
		kinds = []watchKind{kindData, kindExist, kindChild}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if typ == DataWatches && w.childrenSynthesizedLocked(path) {
		// The child watches were the recursive watch's (feed.go).
		kinds = append(kinds, kindChild)
	}
	for _, kind := range kinds {
		k := watchKey{path, kind}
		for _, ch := range w.keys[k] {
			notWatching(ch, ErrWatchRemoved)
		}
		delete(w.keys, k)
	}
	w.removedFeedsLocked(path, typ)
}

// watchedLocked reports whether anything of the client's needs the
// server's watches on path: a one-shot watch, or a watching call under
// way.
func (w *watchSet) watchedLocked(path string) bool {
	if w.pins[path] > 0 {
		return true
	}
	for _, kind := range []watchKind{kindData, kindExist, kindChild} {
		if len(w.keys[watchKey{path, kind}]) > 0 {
			return true
		}
	}
	return false
}

// parentPath is the parent of a path on the wire ("" for the root).
func parentPath(p string) string {
	switch i := strings.LastIndexByte(p, '/'); {
	case p == "/":
		return ""
	case i <= 0:
		return "/"
	default:
		return p[:i]
	}
}

// setWatchesLimit bounds the paths of one SetWatches request, as
// ZooKeeper's client does (the server refuses requests over its
// jute.maxbuffer, 1 MiB by default).
const setWatchesLimit = 128 << 10

// setWatchesFrames returns the SetWatches requests that set keys again
// relative to zxid, with xid -8 as ZooKeeper's client sends them: SetWatches2
// (ZooKeeper 3.6 and later) when there are persistent watches among them,
// SetWatches otherwise, which every server knows.
func setWatchesFrames(keys []watchKey, zxid int64) [][]byte {
	op := jute.OpSetWatches
	for _, k := range keys {
		if k.kind == kindPersist || k.kind == kindRecursive {
			op = jute.OpSetWatches2
		}
	}
	var frames [][]byte
	// Empty lists, not null ones: a server stops at a null list (ZooKeeper
	// with a NullPointerException, answered MarshallingError) and sets
	// none of the watches after it.
	empty := func() jute.SetWatches2 {
		return jute.SetWatches2{RelativeZxid: zxid, DataWatches: []string{}, ExistWatches: []string{}, ChildWatches: []string{},
			PersistentWatches: []string{}, PersistentRecursiveWatches: []string{}}
	}
	sw, size := empty(), 0
	flush := func() {
		h := jute.RequestHeader{Xid: jute.XidSetWatches, Type: op}
		if op == jute.OpSetWatches2 {
			frames = append(frames, jute.Frame(&h, &sw))
		} else {
			frames = append(frames, jute.Frame(&h, &jute.SetWatches{RelativeZxid: zxid,
				DataWatches: sw.DataWatches, ExistWatches: sw.ExistWatches, ChildWatches: sw.ChildWatches}))
		}
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
		case kindPersist:
			sw.PersistentWatches = append(sw.PersistentWatches, k.path)
		case kindRecursive:
			sw.PersistentRecursiveWatches = append(sw.PersistentRecursiveWatches, k.path)
		}
		size += len(k.path) + 4
	}
	if size > 0 {
		flush()
	}
	return frames
}

// watchCall makes a watching call of op on path (as on the wire; req a
// *GetDataRequest, *ExistsRequest or *GetChildren2Request) and returns the
// watch's channel when the server set one, with the call's error:
// ExistsW's ErrNoNode comes with a channel. The request's watch flag is
// set, unless a persistent watch on path covers the call (see feed.go).
func watchCall(ctx context.Context, c *Client, op int32, path string, req, resp any) (<-chan WatchEvent, error) {
	kind := kindData
	if op == jute.OpGetChildren || op == jute.OpGetChildren2 {
		kind = kindChild
	}
	covered, release, err := c.watches.pin(ctx, path, kind)
	if err != nil {
		return nil, notSent{err}
	}
	switch r := req.(type) {
	case *jute.GetDataRequest:
		r.Watch = !covered
	case *jute.ExistsRequest:
		r.Watch = !covered
	case *jute.GetChildren2Request:
		r.Watch = !covered
	}
	ch := make(chan WatchEvent, 1)
	p, err := beginWatch(ctx, c, op, req, watchReg{
		filed: func(session int64, code int32) {
			c.watches.file(session, op, path, code, ch, covered)
			release()
		},
		dropped: release,
	})
	if err != nil {
		release()
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

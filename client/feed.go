package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Persistent watches.
//
// ZooKeeper 3.6 added watches that stay set after they fire (addWatch):
// on a node (its creation, deletion and data changes, and its children
// coming and going), or recursive (the same for every node below it,
// children's comings and goings excepted). The server keeps them, like
// one-shot watches, per connection; a client sets them again on each new
// connection of the session with SetWatches2. Unlike one-shot watches,
// the server does not fire them for what changed while the client was
// away, so a feed is told to read again (EventResync).
//
// ZooKeeper 3.8 keeps one watch per connection and path in each of its
// two watch tables (data and children), and the last call that set one
// decides its kind: a getData, exists or getChildren with its watch flag
// on a node that carries a persistent watch turns that watch one-shot (in
// the data table, for getData and exists; in the children table, for
// getChildren), and it stops firing after its next event; a persistent
// watch set on a node that carries a recursive one makes it not
// recursive. The client keeps its watches from meeting so:
//
//   - the mode the client asks the server for on a path is recursive once
//     any of its feeds there is; under a recursive watch, the children's
//     comings and goings, which it reports as the creation and deletion
//     of each child, go to the non-recursive feeds and child watches of
//     the path as EventNodeChildrenChanged of the path, as the server would
//     have sent it to them;
//   - a watching call on a path with a persistent watch, which reports
//     everything its watch would, goes without its watch flag, and its
//     watch is filed on the client alone, fired by the persistent watch's
//     events (covered); one set before the persistent watch is covered
//     from the addWatch's reply on;
//   - an addWatch or removeWatches of a path is the only one of its path
//     under way, and watching calls on that path wait for its reply, so
//     that the client knows, with each reply, what the server holds.
//
// When the last feed on a path ends (Close, or an overflow), the client
// asks the server to remove the watch, in the background, unless a
// one-shot watch or a watching call of the client still needs it: the
// watch then stays on the server until the connection ends, and its
// events for nobody are dropped.

// WatchMode says what a persistent watch (Watch) reports.
type WatchMode int

// Watch modes.
const (
	// NonRecursive reports the node's own changes: its creation, deletion
	// and data changes, and its children coming and going
	// (EventNodeChildrenChanged), not its children's data.
	NonRecursive WatchMode = iota
	// Recursive reports the creation, deletion and data changes of the node
	// and of every node below it, but no EventNodeChildrenChanged: a
	// child's coming and going is its own creation or deletion.
	Recursive
)

func (m WatchMode) String() string {
	switch m {
	case NonRecursive:
		return "NonRecursive"
	case Recursive:
		return "Recursive"
	}
	return fmt.Sprintf("WatchMode(%d)", int(m))
}

// WatchType says which watches RemoveWatches removes.
type WatchType int32

// Watch types, with ZooKeeper's numbering.
const (
	// ChildWatches: the watches ChildrenW set, and a non-recursive
	// persistent watch (its children half).
	ChildWatches WatchType = 1
	// DataWatches: the watches GetW and ExistsW set, and a persistent watch
	// of either mode.
	DataWatches WatchType = 2
	// AnyWatches: all of them.
	AnyWatches WatchType = 3
)

// EventResync tells a feed's reader that events may have been missed (the
// client reconnected, and the server does not replay what changed while it
// was away): read again what it follows.
const EventResync EventType = -3

// DefaultWatchBuffer is how many events a feed holds for its reader unless
// WithWatchBuffer says otherwise.
const DefaultWatchBuffer = 1024

var (
	// ErrWatchOverflow ends a feed whose reader fell further behind than
	// its buffer (WithWatchBuffer): the client does not hold events without
	// bound. Read again what it followed, and watch again.
	ErrWatchOverflow = errors.New("zkit: watch feed overflowed: its reader fell behind")
	// ErrWatchRemoved ends a watch or feed that RemoveWatches removed.
	ErrWatchRemoved = errors.New("zkit: watch removed")
	// ErrNoWatcher is the server's answer to a RemoveWatches that found
	// no watch of the client's of that type on the path.
	ErrNoWatcher = errors.New("zkit: no such watch")
)

// WatchOption adjusts one Watch.
type WatchOption func(*watchOpts)

type watchOpts struct{ buffer int }

// WithWatchBuffer sets how many events the feed holds for its reader
// (default DefaultWatchBuffer). Each costs about 40 bytes, allocated with
// the feed.
func WithWatchBuffer(n int) WatchOption { return func(o *watchOpts) { o.buffer = n } }

// WatchFeed is the feed of a persistent watch (Watch). Its reader takes
// the events from Events; the client never waits for it.
type WatchFeed struct {
	w      *watchSet
	path   string // the caller's
	wire   string
	mode   WatchMode
	events chan WatchEvent

	// Guarded by w.mu.
	ended bool
	err   error
}

// Events returns the feed's events, in the order the server sent them:
// EventNodeCreated, EventNodeDeleted, EventNodeDataChanged and (for a
// non-recursive watch) EventNodeChildrenChanged, with the caller's path;
// and EventResync after the client reconnected. The channel is closed when
// the feed ends; Err then says why.
func (f *WatchFeed) Events() <-chan WatchEvent { return f.events }

// Err is nil while the feed runs and after Close; otherwise why it ended:
// an error matching ErrWatchOverflow (its reader fell behind), ErrWatchRemoved
// (RemoveWatches), ErrSessionLost (the session the watch was set in is
// gone: watch again on the next) or ErrClosed (the client was closed).
func (f *WatchFeed) Err() error {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	return f.err
}

// Path is the path the feed watches.
func (f *WatchFeed) Path() string { return f.path }

// Close ends the feed: Events is closed. Its events still buffered are
// dropped. When no other feed, watch or watching call of the client needs
// the server's watch on the path any more, the client removes it in the
// background.
func (f *WatchFeed) Close() {
	f.w.mu.Lock()
	unwatch := f.w.dropLocked(f, nil)
	f.w.mu.Unlock()
	f.w.unwatchAll(unwatch)
}

// endLocked ends f with err, once.
func (f *WatchFeed) endLocked(err error) {
	if f.ended {
		return
	}
	f.ended, f.err = true, err
	close(f.events)
}

// Watch sets a persistent watch on path (ZooKeeper 3.6 and later: an older
// server answers ErrUnimplemented, and closes the connection, as for any
// request it does not know; the session lives on) and returns its feed.
// The node need not exist. The watch stays set until the feed ends; Close
// it when done.
//
// The feed is level-triggered across reconnects: on each new connection of
// the session the client sets the watch again before anything else, and
// since the server does not replay what changed meanwhile, the feed says
// EventResync: read again what it follows (its node, or its subtree) and
// take that as the state; the events after it are the changes since.
// When the session is lost the feed ends (Err matches ErrSessionLost):
// watch again, and read again, under the next.
//
// Events are in the server's order, and each is in the feed before the
// reply of any call the server answered after it reaches its caller; a
// reader that takes what its feed holds after a read's reply has seen
// every change up to that read, with LastZxid as its zxid.
//
// The feed holds up to WithWatchBuffer events (DefaultWatchBuffer) for a
// reader that falls behind; one more ends it with ErrWatchOverflow (and is
// counted by the telemetry, zkit.client.watch.overflows). A feed uses no
// goroutine.
func (c *Client) Watch(ctx context.Context, path string, mode WatchMode, opts ...WatchOption) (*WatchFeed, error) {
	if err := c.checkPath("watch", path, false); err != nil {
		return nil, err
	}
	o := watchOpts{buffer: DefaultWatchBuffer}
	for _, opt := range opts {
		opt(&o)
	}
	if mode != NonRecursive && mode != Recursive {
		return nil, &InputError{Op: "watch", Path: path, Reason: fmt.Sprintf("invalid watch mode %d", int(mode))}
	}
	if o.buffer <= 0 {
		return nil, &InputError{Op: "watch", Path: path, Reason: fmt.Sprintf("watch buffer %d must be positive", o.buffer)}
	}
	abs := c.abs(path)
	f := &WatchFeed{w: &c.watches, path: path, wire: abs, mode: mode, events: make(chan WatchEvent, o.buffer)}
	err := c.transit(ctx, request{"watch", path, false}, abs, func(t *transition) (int32, any, func(int64, int32)) {
		sent := c.watches.sendMode(abs, mode)
		req := &jute.AddWatchRequest{Path: abs, Mode: jute.AddWatchPersistent}
		if sent == armTree {
			req.Mode = jute.AddWatchPersistentRecursive
		}
		return jute.OpAddWatch, req, func(session int64, code int32) { c.watches.fileFeed(session, t, sent, code, f) }
	})
	if err == nil {
		err = f.Err() // ended as it was filed: the session changed
	}
	if err != nil {
		f.Close() // filed later, should the reply still come, it ends at once
		return nil, err
	}
	return f, nil
}

// RemoveWatches removes the client's watches of typ on path, on the server
// and in the client, as ZooKeeper's removeAllWatches does: the one-shot
// watches set by GetW and ExistsW (DataWatches), by ChildrenW
// (ChildWatches) or all (AnyWatches) end with EventNotWatching and an Err
// matching ErrWatchRemoved, and so do the feeds of Watch on path that
// typ takes (DataWatches and AnyWatches all of them, ChildWatches the
// non-recursive ones): their Err matches ErrWatchRemoved. Watches set by
// calls the server answers after this one stay. It fails with an error
// matching ErrNoWatcher when the server found none.
//
// Cut off by the connection's loss it fails with a retryable error, not an
// unknown outcome: the client sets its watches again on the next
// connection, these included, so make the call again.
func (c *Client) RemoveWatches(ctx context.Context, path string, typ WatchType) error {
	if err := c.checkPath("removeWatches", path, false); err != nil {
		return err
	}
	if typ < ChildWatches || typ > AnyWatches {
		return &InputError{Op: "removeWatches", Path: path, Reason: fmt.Sprintf("invalid watch type %d", int32(typ))}
	}
	abs := c.abs(path)
	return c.transit(ctx, request{"removeWatches", path, false}, abs, func(t *transition) (int32, any, func(int64, int32)) {
		return jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: abs, Type: int32(typ)}, func(_ int64, code int32) {
			if code == 0 {
				c.watches.removed(abs, typ)
			}
			c.watches.release(t)
		}
	})
}

// transit makes call r, an addWatch or removeWatches of path (as on the
// wire; build gives its opcode, request and what its reply does in the
// registry, which must end t), as the only one of path under way: see
// the rules above.
func (c *Client) transit(ctx context.Context, r request, path string, build func(t *transition) (int32, any, func(int64, int32))) error {
	_, err := doDirect(c, r, func() (struct{}, error) {
		t, err := c.watches.begin(ctx, path)
		if err != nil {
			return struct{}{}, notSent{err}
		}
		op, req, filed := build(t)
		p, err := beginWatch(ctx, c, op, req, watchReg{filed: filed, dropped: func() { c.watches.release(t) }})
		if err != nil {
			c.watches.release(t)
			return struct{}{}, err
		}
		_, err = p.wait(ctx, nil)
		return struct{}{}, err
	})
	return err
}

// unwatch removes the server's watches on t's path, which nothing of the
// client's needs any more (see detachLocked), and ends t. It runs in the
// background while the client lives; when it fails, the watch stays on
// the server until the connection ends.
func (c *Client) unwatch(t *transition) {
	c.Go(func(life context.Context) {
		defer c.watches.release(t)
		ctx, cancel := context.WithTimeout(life, 10*time.Second)
		defer cancel()
		p, err := beginWatch(ctx, c, jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: t.path, Type: int32(AnyWatches)}, watchReg{
			filed: func(_ int64, code int32) {
				if code == 0 {
					c.watches.removed(t.path, AnyWatches)
				}
				c.watches.release(t)
			},
		})
		if err == nil {
			_, _ = p.wait(ctx, nil)
		}
	})
}

// armMode is what the server holds on a path of the current connection.
type armMode uint8

const (
	armNone armMode = iota
	armNode         // a persistent watch
	armTree         // a persistent recursive watch
)

// persisted is what the client holds of the persistent watches on one
// path: the feeds, and the watch the server keeps on the connection.
type persisted struct {
	feeds []*WatchFeed
	armed armMode
}

// coversLocked reports whether the persistent watch on path reports every
// event a one-shot watch of kind would get (see the rules above).
func (w *watchSet) coversLocked(path string, kind watchKind) bool {
	p := w.persist[path]
	return p != nil && p.armed != armNone
}

// childrenSynthesizedLocked reports whether the children's comings and
// goings on path come as their creation and deletion (the server watches
// path recursively), not as EventNodeChildrenChanged.
func (w *watchSet) childrenSynthesizedLocked(path string) bool {
	p := w.persist[path]
	return p != nil && p.armed == armTree
}

// sendMode is the mode to ask the server for on path for a feed of mode:
// recursive once anything of the client's there is.
func (w *watchSet) sendMode(path string, mode WatchMode) armMode {
	w.mu.Lock()
	defer w.mu.Unlock()
	if mode == Recursive {
		return armTree
	}
	p := w.persist[path]
	if p == nil {
		return armNode
	}
	if p.armed == armTree {
		return armTree
	}
	for _, f := range p.feeds {
		if f.mode == Recursive {
			return armTree
		}
	}
	return armNode
}

// fileFeed files f on the reply to its addWatch (sent in mode sent,
// answered with code on a connection of session), and ends transition t.
func (w *watchSet) fileFeed(session int64, t *transition, sent armMode, code int32, f *WatchFeed) {
	w.mu.Lock()
	w.releaseLocked(t)
	if code != 0 {
		w.mu.Unlock()
		return
	}
	if w.persist == nil {
		w.persist = make(map[string]*persisted)
	}
	p := w.persist[t.path]
	if p == nil {
		p = &persisted{}
		w.persist[t.path] = p
	}
	p.armed = sent
	switch {
	case w.closed:
		f.endLocked(ErrClosed)
	case session != w.session:
		f.endLocked(ErrSessionLost)
	case !f.ended:
		p.feeds = append(p.feeds, f)
		w.mu.Unlock()
		return
	}
	// Nobody will read it: remove the server's watch, if nothing else
	// needs it.
	unwatch := w.idleLocked(t.path)
	w.mu.Unlock()
	w.unwatchAll(unwatch)
}

// dropLocked ends feed f with err and takes it off its path, and returns
// the removal to start, if any (see idleLocked).
func (w *watchSet) dropLocked(f *WatchFeed, err error) []*transition {
	f.endLocked(err)
	p := w.persist[f.wire]
	if p == nil {
		return nil
	}
	for i, g := range p.feeds {
		if g == f {
			p.feeds = append(p.feeds[:i:i], p.feeds[i+1:]...)
			break
		}
	}
	return w.idleLocked(f.wire)
}

// idleLocked returns the removal of the server's watch on path to start
// now (see unwatch), if any: when no feed is left on it, and nothing else
// of the client's needs that watch.
func (w *watchSet) idleLocked(path string) []*transition {
	p := w.persist[path]
	if p == nil || len(p.feeds) > 0 || w.changing[path] != nil {
		return nil
	}
	if p.armed == armNone {
		delete(w.persist, path)
		return nil
	}
	if w.watchedLocked(path) || w.unwatch == nil {
		return nil // the watch stays; one-shot watches on path may be covered by it
	}
	return []*transition{w.beginLocked(path)}
}

// unwatchAll starts the background removals of ts.
func (w *watchSet) unwatchAll(ts []*transition) {
	for _, t := range ts {
		w.unwatch(t)
	}
}

// feedLocked hands the event typ on path, of the transaction zxid (0:
// unknown), to the feeds it concerns, and returns the removals to start
// for feeds it ended by overflowing.
func (w *watchSet) feedLocked(typ EventType, path string, zxid int64) []*transition {
	if len(w.persist) == 0 {
		return nil
	}
	var full []*WatchFeed
	push := func(f *WatchFeed, ev WatchEvent) {
		select {
		case f.events <- ev:
		default:
			full = append(full, f)
		}
	}
	ev := WatchEvent{Type: typ, Path: w.rel(path), Zxid: zxid}
	if p := w.persist[path]; p != nil {
		for _, f := range p.feeds {
			switch {
			case typ != EventNodeChildrenChanged:
				push(f, ev)
			case f.mode == NonRecursive && !w.childrenSynthesizedLocked(path):
				// (Under a recursive watch, the event of a child watch
				// set again by SetWatches: the feed has it from the
				// child's creation or deletion, below.)
				push(f, ev)
			}
		}
	}
	if typ != EventNodeChildrenChanged {
		parent := parentPath(path)
		for a := parent; a != ""; a = parentPath(a) {
			p := w.persist[a]
			if p == nil {
				continue
			}
			for _, f := range p.feeds {
				switch {
				case f.mode == Recursive:
					push(f, ev)
				case a == parent && w.childrenSynthesizedLocked(a) && (typ == EventNodeCreated || typ == EventNodeDeleted):
					// A non-recursive feed on a path the server watches
					// recursively: a child came or went.
					push(f, WatchEvent{Type: EventNodeChildrenChanged, Path: w.rel(a), Zxid: zxid})
				}
			}
		}
	}
	return w.overflowLocked(full)
}

// overflowLocked ends the feeds whose buffer was full.
func (w *watchSet) overflowLocked(full []*WatchFeed) []*transition {
	var unwatch []*transition
	for _, f := range full {
		if f.ended {
			continue
		}
		if w.overflowed != nil {
			w.overflowed()
		}
		unwatch = append(unwatch, w.dropLocked(f, overflowError(f))...)
	}
	return unwatch
}

func overflowError(f *WatchFeed) error {
	return fmt.Errorf("%w (%d events unread)", ErrWatchOverflow, cap(f.events))
}

// resumeFeedsLocked tells each live feed to read again, and returns the
// persistent watches to set again with SetWatches2 on a new connection of
// their session. A feed with no room for EventResync ends, and its watch
// is not set again.
func (w *watchSet) resumeFeedsLocked() []watchKey {
	var keys []watchKey
	for path, p := range w.persist {
		live := p.feeds[:0]
		p.armed = armNone
		for _, f := range p.feeds {
			select {
			case f.events <- WatchEvent{Type: EventResync, Path: f.path}:
				live = append(live, f)
			default:
				if w.overflowed != nil {
					w.overflowed()
				}
				f.endLocked(overflowError(f))
				continue
			}
			if f.mode == Recursive {
				p.armed = armTree
			} else if p.armed == armNone {
				p.armed = armNode
			}
		}
		p.feeds = live
		switch p.armed {
		case armNone:
			delete(w.persist, path)
		case armNode:
			keys = append(keys, watchKey{path, kindPersist})
		case armTree:
			keys = append(keys, watchKey{path, kindRecursive})
		}
	}
	return keys
}

// endFeedsLocked ends every feed with err.
func (w *watchSet) endFeedsLocked(err error) {
	for path, p := range w.persist {
		for _, f := range p.feeds {
			f.endLocked(err)
		}
		delete(w.persist, path)
	}
}

// removedFeedsLocked ends the feeds on path that a removeWatches of typ
// removed (see RemoveWatches).
func (w *watchSet) removedFeedsLocked(path string, typ WatchType) {
	p := w.persist[path]
	if p == nil || (typ == ChildWatches && p.armed == armTree) {
		// A recursive watch's children half reports nothing of its own.
		return
	}
	for _, f := range p.feeds {
		f.endLocked(ErrWatchRemoved)
	}
	delete(w.persist, path)
}

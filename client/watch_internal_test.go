package client

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkit-dev/zkit/internal/jute"
)

func eventFrame(typ EventType, path string) []byte {
	return jute.Encode(&jute.WatcherEvent{Type: int32(typ), State: 3, Path: path})
}

func newWatchSet(session int64) *watchSet {
	w := &watchSet{rel: func(p string) string { return strings.TrimPrefix(p, "/ns") }}
	w.resume(session)
	return w
}

// fileWatch files the watch a call of op answered with code sets, and
// returns its channel.
func fileWatch(w *watchSet, session int64, op int32, path string, code jute.Error) chan WatchEvent {
	ch := make(chan WatchEvent, 1)
	w.file(session, op, path, int32(code), ch, false)
	return ch
}

func unfired(ch chan WatchEvent) bool { return len(ch) == 0 }

// An event fires the kinds of watch ZooKeeper's client fires for it, once,
// with the caller's path; a call that set no watch files none.
func TestWatchSetFiresByKind(t *testing.T) {
	t.Parallel()
	w := newWatchSet(7)
	data := fileWatch(w, 7, jute.OpGetData, "/ns/a", 0)
	exists := fileWatch(w, 7, jute.OpExists, "/ns/a", 0)              // on a node: a data watch
	absent := fileWatch(w, 7, jute.OpExists, "/ns/b", jute.ErrNoNode) // an exist watch
	child := fileWatch(w, 7, jute.OpGetChildren2, "/ns/a", 0)
	none := fileWatch(w, 7, jute.OpGetData, "/ns/c", jute.ErrNoNode)

	w.fire(eventFrame(EventNodeChildrenChanged, "/ns/a"), 0x291) // the zxid of the event's transaction
	require.Equal(t, WatchEvent{Type: EventNodeChildrenChanged, Path: "/a", Zxid: 0x291}, <-child)
	_, open := <-child
	assert.False(t, open, "a watch's channel closes after its event")
	assert.True(t, unfired(data) && unfired(exists), "a child event leaves data watches")

	w.fire(eventFrame(EventNodeDataChanged, "/ns/a"), 0)
	assert.Equal(t, EventNodeDataChanged, (<-data).Type)
	assert.Equal(t, EventNodeDataChanged, (<-exists).Type)
	w.fire(eventFrame(EventNodeDataChanged, "/ns/a"), 0)
	assert.Len(t, w.keys, 1, "one-shot: fired watches are gone, /b's is left")

	w.fire(eventFrame(EventNodeCreated, "/ns/b"), 0)
	assert.Equal(t, WatchEvent{Type: EventNodeCreated, Path: "/b"}, <-absent)
	assert.True(t, unfired(none))
	assert.Empty(t, w.keys)
}

// A session's end ends its watches with why; a watch filed by a reply of
// another session ends at once; a new session starts empty.
func TestWatchSetEndsWithItsSession(t *testing.T) {
	t.Parallel()
	w := newWatchSet(7)
	a := fileWatch(w, 7, jute.OpGetData, "/a", 0)
	assert.Len(t, w.resume(7), 1, "the same session sets its watches again")

	w.lose(8, ErrSessionLost)
	assert.True(t, unfired(a), "another session's loss ends nothing")
	w.lose(7, errNewSession)
	ev := <-a
	assert.Equal(t, EventNotWatching, ev.Type)
	assert.ErrorIs(t, ev.Err, ErrSessionLost)

	// The server may still resume a session the client declared lost
	// on a connection being opened at that moment: the client carries on.
	revived := fileWatch(w, 7, jute.OpGetData, "/a", 0)
	assert.True(t, unfired(revived))
	w.fire(eventFrame(EventNodeDeleted, "/a"), 0)
	assert.Equal(t, EventNodeDeleted, (<-revived).Type)

	assert.Empty(t, w.resume(9))
	b := fileWatch(w, 9, jute.OpGetChildren2, "/b", 0)
	w.expired()
	ev = <-b
	assert.ErrorIs(t, ev.Err, ErrSessionLost)
	assert.ErrorIs(t, ev.Err, ErrSessionExpired)

	assert.Empty(t, w.resume(10))
	c := fileWatch(w, 10, jute.OpGetData, "/c", 0)
	d := fileWatch(w, 11, jute.OpGetData, "/d", 0)
	assert.ErrorIs(t, (<-d).Err, ErrSessionLost, "a reply of another session files nothing")
	assert.Empty(t, w.resume(12))
	assert.ErrorIs(t, (<-c).Err, ErrSessionLost, "a new session ends the watches of the old")

	e := fileWatch(w, 12, jute.OpGetData, "/e", 0)
	w.close()
	assert.ErrorIs(t, (<-e).Err, ErrClosed)
	assert.Empty(t, w.resume(12), "a closed client sets nothing again")
	f := fileWatch(w, 12, jute.OpGetData, "/f", 0)
	assert.ErrorIs(t, (<-f).Err, ErrClosed)
}

// SetWatches carries each watch under its kind, relative to the zxid
// given, split so that no request's paths pass the limit.
func TestSetWatchesFrames(t *testing.T) {
	t.Parallel()
	keys := []watchKey{{"/d", kindData}, {"/e", kindExist}, {"/c", kindChild}}
	frames := setWatchesFrames(keys, 42)
	require.Len(t, frames, 1)
	var h jute.RequestHeader
	var sw jute.SetWatches
	require.NoError(t, jute.Decode(frames[0][4:], &h, &sw))
	assert.Equal(t, jute.RequestHeader{Xid: jute.XidSetWatches, Type: jute.OpSetWatches}, h)
	assert.Equal(t, jute.SetWatches{RelativeZxid: 42, DataWatches: []string{"/d"}, ExistWatches: []string{"/e"},
		ChildWatches: []string{"/c"}}, sw)

	keys = keys[:0]
	long := "/" + strings.Repeat("x", 1000)
	for i := range 300 {
		keys = append(keys, watchKey{long + string(rune('a'+i%26)) + strings.Repeat("y", i/26), kindData})
	}
	frames = setWatchesFrames(keys, 1)
	require.Len(t, frames, 3, "300 paths of about 1 KB in requests of at most 128 KiB")
	n := 0
	for _, f := range frames {
		var sw jute.SetWatches
		require.NoError(t, jute.Decode(f[4+8:], &sw))
		assert.LessOrEqual(t, len(f), setWatchesLimit+1024)
		n += len(sw.DataWatches)
	}
	assert.Equal(t, 300, n)
	require.NoError(t, jute.Decode(frames[0][4+8:], &sw))
	assert.NotNil(t, sw.ExistWatches, "an empty list, not a null one")
	assert.NotNil(t, sw.ChildWatches, "an empty list, not a null one")
	assert.Empty(t, setWatchesFrames(nil, 1))
}

// With persistent watches among them, the watches go in SetWatches2, each
// under its kind; without, in SetWatches, which every server knows.
func TestSetWatches2Frames(t *testing.T) {
	t.Parallel()
	keys := []watchKey{{"/d", kindData}, {"/e", kindExist}, {"/c", kindChild}, {"/p", kindPersist}, {"/r", kindRecursive}}
	frames := setWatchesFrames(keys, 42)
	require.Len(t, frames, 1)
	var h jute.RequestHeader
	var sw jute.SetWatches2
	require.NoError(t, jute.Decode(frames[0][4:], &h, &sw))
	assert.Equal(t, jute.RequestHeader{Xid: jute.XidSetWatches, Type: jute.OpSetWatches2}, h)
	assert.Equal(t, jute.SetWatches2{RelativeZxid: 42, DataWatches: []string{"/d"}, ExistWatches: []string{"/e"},
		ChildWatches: []string{"/c"}, PersistentWatches: []string{"/p"}, PersistentRecursiveWatches: []string{"/r"}}, sw)
}

// fileFeed files a feed as the reply to its addWatch does.
func fileFeed(w *watchSet, session int64, path string, mode WatchMode) *WatchFeed {
	f := &WatchFeed{w: w, path: strings.TrimPrefix(path, "/ns"), wire: path, mode: mode, events: make(chan WatchEvent, 8)}
	t := w.beginLocked(path)
	w.fileFeed(session, t, w.sendMode(path, mode), 0, f)
	return f
}

// A new connection of the session sets the persistent watches again (in
// the mode the feeds need) and tells each feed to read again; a new
// session ends them.
func TestWatchSetResumesFeeds(t *testing.T) {
	t.Parallel()
	w := newWatchSet(7)
	node := fileFeed(w, 7, "/ns/a", NonRecursive)
	tree := fileFeed(w, 7, "/ns/b", Recursive)
	both := fileFeed(w, 7, "/ns/b", NonRecursive)
	data := fileWatch(w, 7, jute.OpGetData, "/ns/c", 0)
	keys := w.resume(7)
	assert.ElementsMatch(t, []watchKey{{"/ns/a", kindPersist}, {"/ns/b", kindRecursive}, {"/ns/c", kindData}}, keys)
	for _, f := range []*WatchFeed{node, tree, both} {
		assert.Equal(t, WatchEvent{Type: EventResync, Path: f.path}, <-f.events)
	}
	w.resume(8)
	for _, f := range []*WatchFeed{node, tree, both} {
		_, open := <-f.events
		assert.False(t, open)
		assert.ErrorIs(t, f.err, ErrSessionLost)
	}
	assert.ErrorIs(t, (<-data).Err, ErrSessionLost)
	assert.Empty(t, w.persist)
}

// Under a recursive watch, a child's creation or deletion reaches the
// path's non-recursive feeds and child watches as EventNodeChildrenChanged
// of the path, and the server's own event of that kind (a child watch
// set again on a reconnect) does not reach them twice.
func TestWatchSetSynthesizesChildrenChanged(t *testing.T) {
	t.Parallel()
	w := newWatchSet(7)
	tree := fileFeed(w, 7, "/ns/b", Recursive)
	node := fileFeed(w, 7, "/ns/b", NonRecursive)
	kids := fileWatch(w, 7, jute.OpGetChildren2, "/ns/b", 0)
	w.fire(eventFrame(EventNodeCreated, "/ns/b/x"), 0)
	w.fire(eventFrame(EventNodeChildrenChanged, "/ns/b"), 0)
	w.fire(eventFrame(EventNodeDataChanged, "/ns/b/x/y"), 0)
	assert.Equal(t, WatchEvent{Type: EventNodeChildrenChanged, Path: "/b"}, <-kids)
	assert.Equal(t, WatchEvent{Type: EventNodeChildrenChanged, Path: "/b"}, <-node.events)
	assert.Empty(t, node.events)
	assert.Equal(t, WatchEvent{Type: EventNodeCreated, Path: "/b/x"}, <-tree.events)
	assert.Equal(t, WatchEvent{Type: EventNodeDataChanged, Path: "/b/x/y"}, <-tree.events)
	assert.Empty(t, tree.events)
}

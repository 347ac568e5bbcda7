package client

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkit-dev/zkit/internal/jute"
)

// frames of the wire, as the wire client writes them and the server answers.
func getDataFrame(xid int32, path string) []byte {
	return jute.Frame(&jute.RequestHeader{Xid: xid, Type: jute.OpGetData}, &jute.GetDataRequest{Path: path, Watch: true})
}

func setWatchesFrame(xid int32, data ...string) []byte {
	return jute.Frame(&jute.RequestHeader{Xid: xid, Type: jute.OpSetWatches}, &jute.SetWatches{RelativeZxid: 1, DataWatches: data})
}

func replyBody(xid int32, code jute.Error) []byte {
	return jute.Encode(&jute.ReplyHeader{Xid: xid, Zxid: 9, Err: int32(code)})
}

func eventBody(typ EventType, path string) []byte {
	return jute.Encode(&jute.ReplyHeader{Xid: -1, Zxid: -1}, &jute.WatcherEvent{Type: int32(typ), State: 3, Path: path})
}

type wire struct{ written [][]byte }

func (w *wire) conn(table *watchTable) *rewatch {
	return &rewatch{table: table, write: func(p []byte) error {
		w.written = append(w.written, append([]byte(nil), p...))
		return nil
	}}
}

func decodeSetWatches(t *testing.T, p []byte) jute.SetWatches {
	t.Helper()
	var h jute.RequestHeader
	var sw jute.SetWatches
	require.NoError(t, jute.Decode(p[4:], &h, &sw))
	require.Equal(t, jute.OpSetWatches, h.Type)
	return sw
}

// A watch set on the new connection before go-zookeeper takes its list
// must not go into SetWatches: compared with the zxid the last connection
// ended at, a node created since would fire a NodeDataChanged at once.
func TestSetWatchesLeavesOutThisConnectionsWatches(t *testing.T) {
	var table watchTable
	var w wire

	// First connection: no watches yet; /old is watched.
	first := w.conn(&table)
	first.started(true)
	require.False(t, first.request(getDataFrame(1, "/old")), "nothing to hold without watches")
	first.reply(replyBody(1, 0))

	// Second connection: /old is carried over; /new is watched on it.
	second := w.conn(&table)
	second.started(true)
	require.True(t, second.request(getDataFrame(2, "/new")), "requests wait for SetWatches")
	q, carried := second.setWatches(setWatchesFrame(3, "/old", "/new"), 42)
	sw := decodeSetWatches(t, q)
	require.Equal(t, []string{"/old"}, sw.DataWatches)
	require.Equal(t, int64(42), sw.RelativeZxid)
	require.NoError(t, second.carriedSome(carried))
	require.Len(t, w.written, 1, "the held request goes out once SetWatches carried the old watches")
	require.Equal(t, getDataFrame(2, "/new"), w.written[0])
	require.False(t, second.request(getDataFrame(4, "/x")), "no more holding")
	second.reply(replyBody(2, 0))

	// Third connection: both /old and /new carried over; a watch that
	// fired is not.
	second.reply(eventBody(EventNodeDeleted, "/old"))
	third := w.conn(&table)
	third.started(true)
	q, _ = third.setWatches(setWatchesFrame(5, "/old", "/new"), 43)
	require.Equal(t, []string{"/new"}, decodeSetWatches(t, q).DataWatches)
}

// Without watches at the start, nothing waits, and a SetWatches the wire
// client sends later (its list taken after replies on this connection)
// carries nothing.
func TestSetWatchesWithoutStartingWatchesCarriesNone(t *testing.T) {
	var table watchTable
	var w wire
	c := w.conn(&table)
	c.started(true)
	require.False(t, c.request(getDataFrame(1, "/n")))
	c.reply(replyBody(1, 0))
	q, carried := c.setWatches(setWatchesFrame(2, "/n"), 7)
	require.Empty(t, decodeSetWatches(t, q).DataWatches)
	require.Zero(t, carried)
}

// The table follows the wire client's rules: exists on a missing node sets
// an exist watch, a failed getData none, an expired session clears all.
func TestWatchTableFollowsTheWireClient(t *testing.T) {
	var table watchTable
	var w wire
	c := w.conn(&table)
	c.started(true)
	c.request(jute.Frame(&jute.RequestHeader{Xid: 1, Type: jute.OpExists}, &jute.ExistsRequest{Path: "/e", Watch: true}))
	c.reply(replyBody(1, jute.ErrNoNode))
	c.request(getDataFrame(2, "/missing"))
	c.reply(replyBody(2, jute.ErrNoNode))
	c.request(jute.Frame(&jute.RequestHeader{Xid: 3, Type: jute.OpGetChildren2}, &jute.GetChildrenRequest{Path: "/d", Watch: true}))
	c.reply(replyBody(3, 0))
	require.Equal(t, map[watchKey]struct{}{{"/e", kindExist}: {}, {"/d", kindChild}: {}}, table.snapshot())

	c.reply(eventBody(EventNodeCreated, "/e"))
	require.Equal(t, map[watchKey]struct{}{{"/d", kindChild}: {}}, table.snapshot())

	w.conn(&table).started(false)
	require.Empty(t, table.snapshot())
}

package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

func TestOpsAndWatches(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))

		p, err := c.Create(ctx, base+"/a", []byte("1"), client.Persistent)
		require.NoError(t, err)
		require.Equal(t, base+"/a", p)
		_, err = c.Create(ctx, base+"/a", nil, client.Persistent)
		assert.ErrorIs(t, err, client.ErrNodeExists)

		data, st, w, err := c.GetW(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, "1", string(data))
		st2, err := c.Set(ctx, p, []byte("2"), st.Version)
		require.NoError(t, err)
		assert.Equal(t, st.Version+1, st2.Version)
		ev := <-w
		assert.Equal(t, client.EventNodeDataChanged, ev.Type)
		assert.Equal(t, p, ev.Path)
		_, err = c.Set(ctx, p, []byte("3"), st.Version)
		assert.ErrorIs(t, err, client.ErrBadVersion)

		seq, err := c.Create(ctx, base+"/s-", nil, client.PersistentSequential)
		require.NoError(t, err)
		assert.Regexp(t, `/s-\d{10}$`, seq)

		kids, _, cw, err := c.ChildrenW(ctx, base)
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"a", seq[len(base)+1:]}, kids)
		require.NoError(t, c.Delete(ctx, seq, -1))
		assert.Equal(t, client.EventNodeChildrenChanged, (<-cw).Type)

		ok, _, ew, err := c.ExistsW(ctx, base+"/later")
		require.NoError(t, err)
		assert.False(t, ok)
		_, err = c.Create(ctx, base+"/later", nil, client.Ephemeral)
		require.NoError(t, err)
		assert.Equal(t, client.EventNodeCreated, (<-ew).Type)
		_, err = c.Create(ctx, base+"/later/child", nil, client.Persistent)
		assert.ErrorIs(t, err, client.ErrNoChildrenForEphemerals)

		assert.ErrorIs(t, c.Delete(ctx, base+"/missing", -1), client.ErrNoNode)
		assert.ErrorIs(t, c.Delete(ctx, base, -1), client.ErrNotEmpty)

		// Containers: reaped by the server once they had a child and are empty.
		_, err = c.Create(ctx, base+"/box", nil, client.Container)
		require.NoError(t, err)

		// TTL nodes need extendedTypesEnabled on the server; either way the call
		// is well-formed and reaches it.
		_, err = c.Create(ctx, base+"/ttl", nil, client.PersistentTTL, client.WithTTL(time.Minute))
		if err != nil {
			assert.NotErrorIs(t, err, client.ErrInvalidInput)
		}
	})
}

func TestMulti(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))

		res, err := c.Multi(ctx,
			client.CreateOp(base+"/x", []byte("x"), client.Persistent),
			client.CreateOp(base+"/q-", nil, client.PersistentSequential),
			client.SetOp(base+"/x", []byte("y"), 0),
			client.CheckOp(base+"/x", 1),
		)
		require.NoError(t, err)
		require.Len(t, res, 4)
		assert.Equal(t, base+"/x", res[0].Path)
		assert.Regexp(t, `/q-\d{10}$`, res[1].Path)
		require.NotNil(t, res[2].Stat)
		assert.Equal(t, int32(1), res[2].Stat.Version)

		// A failing op rolls everything back and is named in the error.
		res, err = c.Multi(ctx,
			client.CreateOp(base+"/y", nil, client.Persistent),
			client.CheckOp(base+"/x", 0), // wrong version
			client.DeleteOp(base+"/x", -1),
		)
		var me *client.MultiError
		require.ErrorAs(t, err, &me)
		assert.Equal(t, 1, me.Index)
		assert.ErrorIs(t, err, client.ErrBadVersion)
		require.Len(t, res, 3)
		assert.ErrorIs(t, res[2].Err, client.ErrRolledBack)
		ok, _, err := c.Exists(ctx, base+"/y")
		require.NoError(t, err)
		assert.False(t, ok, "nothing of a failed multi is applied")
	})
}

// LastZxid follows every reply; CatchUp gives read-your-writes across
// clients.
func TestZxidReadYourWritesAcrossClients(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		a := connect(t, b.Servers)
		other := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, a.EnsurePath(ctx, base))
		before := a.LastZxid()
		for i := range 5 {
			st, err := a.Set(ctx, base, []byte(fmt.Sprint(i)), -1)
			require.NoError(t, err)
			assert.Equal(t, st.Mzxid, a.LastZxid())
			assert.Greater(t, a.LastZxid(), before)
			before = a.LastZxid()
		}
		require.NoError(t, other.CatchUp(ctx, a.LastZxid()))
		data, st, err := other.Get(ctx, base)
		require.NoError(t, err)
		assert.Equal(t, "4", string(data))
		assert.GreaterOrEqual(t, other.LastZxid(), st.Mzxid)
		require.NoError(t, other.CatchUp(ctx, 0)) // already seen: no round trip needed

		// A Multi's Stats count too.
		rs, err := a.Multi(ctx, client.SetOp(base, []byte("multi"), -1))
		require.NoError(t, err)
		assert.Equal(t, rs[0].Stat.Mzxid, a.LastZxid())
	})
}

// LastZxid moves with every write, creates and deletes included (whose
// replies carry no Stat), and with multis and syncs: another client given
// it catches up (with one sync, since it has not seen that zxid) and reads
// each write at once.
func TestLastZxidFollowsEveryReply(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		writer := connect(t, b.Servers)
		proxy := zktest.NewProxy(t, b.Addr())
		reader := connect(t, []string{proxy.Addr()})
		base := zktest.UniquePath(t)
		require.NoError(t, writer.EnsurePath(ctx, base))

		// catchUp has the reader catch up with the writer's last write, and
		// checks that it synced to do so.
		catchUp := func(what string) {
			t.Helper()
			sent := proxy.Requests()
			require.NoError(t, reader.CatchUp(ctx, writer.LastZxid()))
			assert.Equal(t, sent+1, proxy.Requests(), "%s: CatchUp to a zxid not seen did not sync", what)
			assert.GreaterOrEqual(t, reader.LastZxid(), writer.LastZxid(), what)
		}
		for i := range 10 {
			before := writer.LastZxid()
			p, err := writer.Create(ctx, base+"/n-", nil, client.PersistentSequential)
			require.NoError(t, err)
			require.Greater(t, writer.LastZxid(), before, "create %d", i)
			catchUp(fmt.Sprint("create ", i))
			ok, st, err := reader.Exists(ctx, p)
			require.NoError(t, err)
			require.True(t, ok, "create %d: the reader does not see the node", i)
			assert.Equal(t, st.Czxid, writer.LastZxid(), "create %d: the zxid of the create's reply is its node's", i)

			before = writer.LastZxid()
			require.NoError(t, writer.Delete(ctx, p, -1))
			require.Greater(t, writer.LastZxid(), before, "delete %d", i)
			catchUp(fmt.Sprint("delete ", i))
			ok, _, err = reader.Exists(ctx, p)
			require.NoError(t, err)
			require.False(t, ok, "delete %d: the reader still sees the node", i)
		}

		before := writer.LastZxid()
		_, err := writer.Multi(ctx, client.CreateOp(base+"/m", nil, client.Persistent), client.DeleteOp(base+"/m", -1))
		require.NoError(t, err)
		require.Greater(t, writer.LastZxid(), before, "multi")
		catchUp("multi")

		// A sync's reply carries the zxid the server caught up to: the
		// writer's last write, for a client that never saw it.
		require.NoError(t, writer.Delete(ctx, base, -1))
		require.NoError(t, reader.Sync(ctx, "/"))
		assert.GreaterOrEqual(t, reader.LastZxid(), writer.LastZxid(), "sync")
	})
}

func TestDigestAuthAndACL(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		owner := connect(t, b.Servers, client.WithDigestAuth("alice", "secret"))
		other := connect(t, b.Servers)
		base := zktest.UniquePath(t)
		require.NoError(t, owner.EnsurePath(ctx, base))
		p, err := owner.Create(ctx, base+"/private", []byte("s"), client.Persistent,
			client.WithACL(client.DigestACL(client.PermAll, "alice", "secret")...))
		require.NoError(t, err)
		_, _, err = other.Get(ctx, p)
		assert.ErrorIs(t, err, client.ErrNoAuth)
		data, _, err := owner.Get(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, "s", string(data))
		acl, st, err := owner.GetACL(ctx, p)
		require.NoError(t, err)
		require.Len(t, acl, 1)
		assert.Equal(t, "digest", acl[0].Scheme)
		_, err = owner.SetACL(ctx, p, client.WorldACL(client.PermRead), st.Aversion)
		require.NoError(t, err)
		_, _, err = other.Get(ctx, p)
		assert.NoError(t, err)
	})
}

// CatchUp costs nothing when the client has seen the zxid already, and
// syncs the server (one request) when it has not.
func TestCatchUpSyncsOnlyWhenBehind(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()})
		writer := connect(t, b.Servers)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))

		before := proxy.Requests()
		require.NoError(t, c.CatchUp(ctx, c.LastZxid()))
		assert.Equal(t, before, proxy.Requests(), "CatchUp to a zxid already seen sent a request")

		st, err := writer.Set(ctx, base, []byte("new"), -1)
		require.NoError(t, err)
		require.Less(t, c.LastZxid(), st.Mzxid)
		before = proxy.Requests()
		require.NoError(t, c.CatchUp(ctx, st.Mzxid))
		assert.Equal(t, before+1, proxy.Requests(), "CatchUp to a zxid not seen did not sync")
		data, _, err := c.Get(ctx, base)
		require.NoError(t, err)
		assert.Equal(t, "new", string(data))
	})
}

// Every kind of watch on a node fires when the node is deleted: a child
// watch as well as a data watch, with NodeDeleted.
func TestWatchesFireWhenTheirNodeIsDeleted(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		c := connect(t, b.Servers)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		_, _, child, err := c.ChildrenW(ctx, base)
		require.NoError(t, err)
		_, _, data, err := c.GetW(ctx, base)
		require.NoError(t, err)
		_, _, exists, err := c.ExistsW(ctx, base)
		require.NoError(t, err)

		require.NoError(t, c.Delete(ctx, base, -1))
		for name, w := range map[string]<-chan client.WatchEvent{"child": child, "data": data, "exists": exists} {
			select {
			case ev := <-w:
				assert.Equal(t, client.WatchEvent{Type: client.EventNodeDeleted, Path: base}, ev, name)
			case <-time.After(zktest.Scale(10 * time.Second)):
				t.Fatalf("the %s watch did not fire when its node was deleted", name)
			}
		}
	})
}

// CreateDir and EnsurePath ride out a lost reply: the create that went
// through before the connection broke leaves the directory, and the call
// succeeds once it finds it.
func TestCreateDirRidesOutALostReply(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()})
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))

		proxy.CutAfterCreateOf(base + "/dir")
		require.NoError(t, c.CreateDir(ctx, base+"/dir", client.Persistent))
		proxy.CutAfterCreateOf(base + "/a")
		require.NoError(t, c.EnsurePath(ctx, base+"/a/b"))
		for _, p := range []string{base + "/dir", base + "/a/b"} {
			ok, _, err := c.Exists(ctx, p)
			require.NoError(t, err)
			assert.True(t, ok, p)
		}
	})
}

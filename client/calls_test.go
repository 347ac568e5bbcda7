package client_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// The calls of ZooKeeper 3.5-3.9 beyond the basic ones: CreateStat,
// MultiRead, Ephemerals, AllChildrenNumber, GetConfig(W) and WhoAmI.

// CreateStat returns the new node's Stat, as a read of it finds it, for
// every mode; it moves LastZxid to the create.
func TestCreateStat(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		for _, mode := range []client.CreateMode{client.Persistent, client.Ephemeral, client.PersistentSequential,
			client.EphemeralSequential, client.Container} {
			p, st, err := c.CreateStat(ctx, base+"/"+mode.String(), []byte("data"), mode)
			require.NoError(t, err, "%v", mode)
			require.NotNil(t, st)
			assert.Equal(t, st.Czxid, c.LastZxid(), "%v: LastZxid is the create's", mode)
			_, read, err := c.Exists(ctx, p)
			require.NoError(t, err)
			assert.Equal(t, *read, *st, "%v: the Stat a read finds", mode)
			assert.Equal(t, int32(4), st.DataLength)
			if mode.IsEphemeral() {
				assert.Equal(t, c.Session().ID(), st.EphemeralOwner)
			}
		}
		_, _, err := c.CreateStat(ctx, base+"/"+client.Persistent.String(), nil, client.Persistent)
		assert.ErrorIs(t, err, client.ErrNodeExists)
	})
}

// A protected create's token is the new node's czxid.
func TestCreateProtectedZxidIsCzxid(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		p, czxid, err := c.CreateProtectedZxid(ctx, base+"/n-", nil, client.EphemeralSequential)
		require.NoError(t, err)
		_, st, err := c.Exists(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, st.Czxid, czxid)
	})
}

// MultiRead reads in one request; each read fails on its own.
func TestMultiRead(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ns := zktest.UniquePath(t)
		c := connect(t, b.Servers, client.WithNamespace(ns))
		ctx := testCtx(t)
		for _, p := range []string{"/a", "/a/x", "/a/y"} {
			_, err := c.Create(ctx, p, []byte(p), client.Persistent)
			require.NoError(t, err)
		}
		_, st, err := c.Get(ctx, "/a")
		require.NoError(t, err)
		rs, err := c.MultiRead(ctx, client.GetOp("/a"), client.ChildrenOp("/a"), client.GetOp("/missing"),
			client.ChildrenOp("/missing"), client.GetOp("/a/x"))
		require.NoError(t, err)
		require.Len(t, rs, 5)
		assert.Equal(t, "/a", string(rs[0].Data))
		assert.Equal(t, *st, *rs[0].Stat)
		assert.NoError(t, rs[0].Err)
		slices.Sort(rs[1].Children)
		assert.Equal(t, []string{"x", "y"}, rs[1].Children)
		assert.ErrorIs(t, rs[2].Err, client.ErrNoNode)
		assert.Contains(t, rs[2].Err.Error(), `"/missing"`)
		assert.ErrorIs(t, rs[3].Err, client.ErrNoNode)
		assert.Equal(t, "/a/x", string(rs[4].Data))
		rs, err = c.MultiRead(ctx)
		assert.NoError(t, err)
		assert.Empty(t, rs)
	})
}

// A MultiRead whose reply is longer than the client reads fails with a
// *ReplyTooLargeError, and the connection goes on.
func TestMultiReadReplyTooLarge(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		w := connect(t, b.Servers)
		c := connect(t, b.Servers, client.WithMaxBuffer(4096))
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, w.EnsurePath(ctx, base))
		_, err := w.Create(ctx, base+"/big", bytes.Repeat([]byte("x"), 40<<10), client.Persistent)
		require.NoError(t, err)
		_, err = c.MultiRead(ctx, client.GetOp(base+"/big"), client.GetOp(base+"/big"))
		var big *client.ReplyTooLargeError
		require.ErrorAs(t, err, &big)
		assert.Greater(t, big.Size, big.Limit)
		rs, err := c.MultiRead(ctx, client.GetOp(base))
		require.NoError(t, err)
		assert.NoError(t, rs[0].Err)
	})
}

// Ephemerals lists the session's own ephemeral nodes, by string prefix.
func TestEphemerals(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ns := zktest.UniquePath(t)
		c := connect(t, b.Servers, client.WithNamespace(ns))
		other := connect(t, b.Servers, client.WithNamespace(ns))
		ctx := testCtx(t)
		require.NoError(t, c.EnsurePath(ctx, "/app"))
		for _, p := range []string{"/app/e1", "/app/e2", "/apple"} {
			_, err := c.Create(ctx, p, nil, client.Ephemeral)
			require.NoError(t, err)
		}
		_, err := c.Create(ctx, "/app/persistent", nil, client.Persistent)
		require.NoError(t, err)
		_, err = other.Create(ctx, "/app/theirs", nil, client.Ephemeral)
		require.NoError(t, err)

		for prefix, want := range map[string][]string{
			"":        {"/app/e1", "/app/e2", "/apple"},
			"/":       {"/app/e1", "/app/e2", "/apple"},
			"/app":    {"/app/e1", "/app/e2", "/apple"},
			"/app/e":  {"/app/e1", "/app/e2"},
			"/nobody": {},
		} {
			got, err := c.Ephemerals(ctx, prefix)
			require.NoError(t, err)
			slices.Sort(got)
			assert.Equal(t, want, got, "prefix %q", prefix)
		}
	})
}

// AllChildrenNumber counts every node below a path.
func TestAllChildrenNumber(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		for _, p := range []string{base + "/a/x", base + "/a/y", base + "/b"} {
			require.NoError(t, c.EnsurePath(ctx, p))
		}
		n, err := c.AllChildrenNumber(ctx, base)
		require.NoError(t, err)
		assert.Equal(t, 4, n)
		n, err = c.AllChildrenNumber(ctx, base+"/b")
		require.NoError(t, err)
		assert.Equal(t, 0, n)
		_, err = c.AllChildrenNumber(ctx, base+"/missing")
		assert.ErrorIs(t, err, client.ErrNoNode)
	})
}

// WhoAmI names the session's identities: its address and its credentials.
func TestWhoAmI(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers, client.WithDigestAuth("alice", "secret"))
		ctx := testCtx(t)
		ids, err := c.WhoAmI(ctx)
		require.NoError(t, err)
		assert.Contains(t, ids, client.ClientInfo{Scheme: "digest", User: "alice"})
		assert.Contains(t, ids, client.ClientInfo{Scheme: "ip", User: "127.0.0.1"})
		require.NoError(t, c.AddAuth(ctx, "digest", []byte("bob:pw")))
		ids, err = c.WhoAmI(ctx)
		require.NoError(t, err)
		assert.Contains(t, ids, client.ClientInfo{Scheme: "digest", User: "bob"})
	})
}

// GetConfig reads the ensemble's configuration outside the client's
// namespace; GetConfigW's watch is a watch like any other: it ends with
// RemoveWatches and with its session.
func TestGetConfig(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		plain := connect(t, b.Servers)
		c := connect(t, b.Servers, client.WithNamespace(zktest.UniquePath(t)))
		ctx := testCtx(t)
		want, wantStat, err := plain.Get(ctx, client.ConfigNode)
		require.NoError(t, err)
		data, st, err := c.GetConfig(ctx)
		require.NoError(t, err)
		assert.Equal(t, want, data)
		assert.Equal(t, *wantStat, *st)

		_, _, w, err := plain.GetConfigW(ctx)
		require.NoError(t, err)
		assert.True(t, watchedBy(t, b.Addr(), plain.Session().ID())[client.ConfigNode])
		require.NoError(t, plain.RemoveWatches(ctx, client.ConfigNode, client.DataWatches))
		e := fired(t, w)
		assert.Equal(t, client.EventNotWatching, e.Type)
		assert.ErrorIs(t, e.Err, client.ErrWatchRemoved)

		_, _, w, err = c.GetConfigW(ctx)
		require.NoError(t, err)
		b.ExpireSession(t, c.Session())
		e = fired(t, w)
		assert.Equal(t, client.EventNotWatching, e.Type)
		assert.ErrorIs(t, e.Err, client.ErrSessionLost)
	})
}

// Bad input to the calls is refused before anything is sent.
func TestCallsBadInput(t *testing.T) {
	t.Parallel()
	refusedBeforeSending(t, func(ctx context.Context, c *client.Client) map[string]func() error {
		return map[string]func() error{
			"createStat path": func() error { _, _, err := c.CreateStat(ctx, "a", nil, client.Persistent); return err },
			"createStat mode": func() error { _, _, err := c.CreateStat(ctx, "/a", nil, client.CreateMode(42)); return err },
			"createStat ops": func() error {
				_, _, err := c.CreateStat(ctx, "/a", nil, client.Persistent, client.WithOps(client.CheckOp("/", -1)))
				return err
			},
			"multiRead path": func() error { _, err := c.MultiRead(ctx, client.GetOp("/a/")); return err },
			"multiRead op":   func() error { _, err := c.MultiRead(ctx, client.ReadOp{}); return err },
			"multiRead size": func() error {
				ops := make([]client.ReadOp, 3000)
				for i := range ops {
					ops[i] = client.GetOp("/" + string(bytes.Repeat([]byte("x"), 500)))
				}
				_, err := c.MultiRead(ctx, ops...)
				return err
			},
			"ephemerals":        func() error { _, err := c.Ephemerals(ctx, "app"); return err },
			"allChildrenNumber": func() error { _, err := c.AllChildrenNumber(ctx, "//"); return err },
		}
	})
}

// A call cut off by its connection's loss: a read fails with a retryable
// error, CreateStat with an unknown outcome.
func TestCallsConnectionLossMidCall(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		p := newProxied(t, b, zktest.Scale(10*time.Second))
		ctx := testCtx(t)
		for name, call := range map[string]func() error{
			"multiRead":         func() error { _, err := p.c.MultiRead(ctx, client.GetOp(p.base)); return err },
			"ephemerals":        func() error { _, err := p.c.Ephemerals(ctx, ""); return err },
			"allChildrenNumber": func() error { _, err := p.c.AllChildrenNumber(ctx, p.base); return err },
			"whoAmI":            func() error { _, err := p.c.WhoAmI(ctx); return err },
			"getConfig":         func() error { _, _, err := p.c.GetConfig(ctx); return err },
			"getConfigW":        func() error { _, _, _, err := p.c.GetConfigW(ctx); return err },
			"removeWatches":     func() error { return p.c.RemoveWatches(ctx, p.base, client.AnyWatches) },
		} {
			waitConnected(t, p.c)
			p.proxy.CutAfterNextRequest()
			err := call()
			assert.True(t, client.IsRetryable(err), "%s: %v", name, err)
		}
		waitConnected(t, p.c)
		p.proxy.CutAfterNextRequest()
		_, _, err := p.c.CreateStat(ctx, p.base+"/x", nil, client.Persistent)
		assert.True(t, client.IsOutcomeUnknown(err), "createStat: %v", err)
	})
}

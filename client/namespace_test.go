package client_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Inside a namespace every path the caller gives, gets back or sees in an
// event is relative to it, and nothing outside it can be reached.
func TestNamespace(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		ns := zktest.UniquePath(t) + "/app"
		c := b.Connect(t, client.WithNamespace(ns))
		outside := b.Connect(t)
		require.Equal(t, ns, c.Namespace())
		ok, _, err := outside.Exists(ctx, ns)
		require.NoError(t, err)
		require.True(t, ok, "Connect creates the namespace")

		p, err := c.Create(ctx, "/q-", []byte("x"), client.PersistentSequential)
		require.NoError(t, err)
		require.Regexp(t, `^/q-[0-9]{10}$`, p)
		data, _, err := outside.Get(ctx, ns+p)
		require.NoError(t, err)
		require.Equal(t, "x", string(data))

		children, _, err := c.Children(ctx, "/")
		require.NoError(t, err)
		require.Equal(t, []string{p[1:]}, children)

		_, _, w, err := c.GetW(ctx, p)
		require.NoError(t, err)
		sub := c.Subscribe()
		defer sub.Close()
		_, err = outside.Set(ctx, ns+p, []byte("y"), -1)
		require.NoError(t, err)
		ev := <-w
		require.Equal(t, client.EventNodeDataChanged, ev.Type)
		require.Equal(t, p, ev.Path)
		for e := range sub.Events() {
			if e.Type == client.EventNodeDataChanged {
				require.Equal(t, p, e.Path)
				break
			}
		}

		res, err := c.Multi(ctx, client.CreateOp("/m", nil, client.Persistent), client.CheckOp(p, -1))
		require.NoError(t, err)
		require.Equal(t, "/m", res[0].Path)

		err = c.Delete(ctx, "/", -1)
		require.ErrorIs(t, err, client.ErrInvalidInput)
		_, _, err = c.Get(ctx, "/../x")
		require.ErrorIs(t, err, client.ErrInvalidInput)

		_, err = client.Connect(ctx, b.Servers, client.WithNamespace("/"))
		require.ErrorIs(t, err, client.ErrInvalidInput)
	})
}

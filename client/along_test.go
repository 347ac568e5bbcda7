package client_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// WithOps puts a create in one transaction with other ops: a node handed
// over for the next one in a single step, nothing applied when an op
// fails, bad input refused before anything is sent, and a lost reply
// resolved by the protected name without a second transaction.
func TestCreateWithOps(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()})
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		children := func() []string {
			t.Helper()
			ch, _, err := c.Children(ctx, base)
			require.NoError(t, err)
			return ch
		}
		only := func(p string) {
			t.Helper()
			_, name := client.SplitPath(p)
			require.Equal(t, []string{name}, children())
		}
		czxidOf := func(p string) int64 {
			t.Helper()
			_, st, err := c.Exists(ctx, p)
			require.NoError(t, err)
			return st.Czxid
		}

		old, err := c.CreateProtected(ctx, base+"/n-", nil, client.EphemeralSequential)
		require.NoError(t, err)
		next, czxid, listing, err := c.CreateProtectedListed(ctx, base+"/n-", []byte("next"), client.EphemeralSequential,
			client.WithOps(client.DeleteOp(old, -1)))
		require.NoError(t, err)
		only(next)
		require.NotNil(t, listing, "the listing behind the transaction")
		_, name := client.SplitPath(next)
		assert.Equal(t, []string{name}, listing.Children, "the listing shows the transaction applied")
		assert.Equal(t, czxidOf(next), czxid, "the token is the transaction's zxid")

		// An op that fails: nothing is applied.
		_, _, _, err = c.CreateProtectedListed(ctx, base+"/n-", nil, client.EphemeralSequential,
			client.WithOps(client.DeleteOp(old, -1)))
		require.ErrorIs(t, err, client.ErrNoNode)
		var me *client.MultiError
		require.ErrorAs(t, err, &me)
		assert.Equal(t, 1, me.Index, "the delete, after the create, failed")
		only(next)

		// Bad input: refused before anything is sent.
		var ie *client.InputError
		_, err = c.Create(ctx, base+"/c", nil, client.Container, client.WithOps(client.CheckOp(base, -1)))
		require.ErrorAs(t, err, &ie)
		_, err = c.CreateProtected(ctx, base+"/n-", nil, client.EphemeralSequential, client.WithOps(client.DeleteOp(next, -2)))
		require.ErrorAs(t, err, &ie)
		_, err = c.Create(ctx, base+"/p", nil, client.Persistent, client.WithOps(client.Op{}))
		require.ErrorAs(t, err, &ie)
		only(next)

		// A lost reply: the node is found by its protected name, with the
		// delete applied once.
		proxy.CutAfterNextRequest()
		cut, czxid, _, err := c.CreateProtectedListed(ctx, base+"/n-", nil, client.EphemeralSequential,
			client.WithOps(client.DeleteOp(next, -1)))
		require.NoError(t, err)
		only(cut)
		assert.Equal(t, czxidOf(cut), czxid, "the token after a lost reply")

		// A plain create goes along too.
		p, err := c.Create(ctx, base+"/p", nil, client.Persistent, client.WithOps(client.DeleteOp(cut, -1)))
		require.NoError(t, err)
		only(p)
	})
}

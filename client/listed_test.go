package client_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// CreateListed's listing is taken right after the create: it holds the new
// node and every node created before it (here, the client's own earlier
// nodes), with the parent's Stat. A create that fails has no listing, and
// bad input sends nothing.
func TestCreateListed(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, b.Connect(t).EnsurePath(ctx, base))
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				c := b.Connect(t)
				var mine []string
				for range 50 {
					p, listing, err := c.CreateListed(ctx, base+"/n-", nil, client.EphemeralSequential)
					if !assert.NoError(t, err) {
						return
					}
					_, name := client.SplitPath(p)
					mine = append(mine, name)
					if !(assert.NotNil(t, listing, "client %d: no listing", g) &&
						assert.Subset(t, listing.Children, mine, "client %d: the listing after creating %s", g, name) &&
						assert.Equal(t, int(listing.Stat.NumChildren), len(listing.Children), "client %d: the parent's Stat is the listing's", g)) {
						return
					}
				}
			})
		}
		wg.Wait()

		c := b.Connect(t)
		_, listing, err := c.CreateListed(ctx, base+"/fixed", nil, client.Persistent)
		require.NoError(t, err)
		require.NotNil(t, listing)
		assert.Contains(t, listing.Children, "fixed")
		_, listing, err = c.CreateListed(ctx, base+"/fixed", nil, client.Persistent)
		require.ErrorIs(t, err, client.ErrNodeExists)
		assert.Nil(t, listing, "no listing for a create that failed")

		before, _, err := c.Children(ctx, base)
		require.NoError(t, err)
		_, _, err = c.CreateListed(ctx, base+"/bad\x00", nil, client.Persistent)
		var ie *client.InputError
		require.ErrorAs(t, err, &ie)
		after, _, err := c.Children(ctx, base)
		require.NoError(t, err)
		assert.ElementsMatch(t, before, after, "nothing created for bad input")
	})
}

// A listing that does not show the new node is none: here the node was
// deleted in the same transaction that created it.
func TestCreateListedWithoutTheNode(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		c := b.Connect(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		p, listing, err := c.CreateListed(ctx, base+"/gone", nil, client.Persistent,
			client.WithOps(client.DeleteOp(base+"/gone", -1)))
		require.NoError(t, err)
		assert.Equal(t, base+"/gone", p)
		assert.Nil(t, listing, "a listing without the new node")
	})
}

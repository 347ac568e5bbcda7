package client_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// A request the server does not know fails with ErrUnimplemented, applies
// nothing, and costs the session nothing, whether the server answers with
// an error (TTL nodes on a ZooKeeper without extended types) or also
// closes the connection (containers on a ZooKeeper older than 3.5).
func TestUnimplemented(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, servers []string, container bool) {
		c := connect(t, servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		sess := c.Session()

		_, err := c.Create(ctx, base+"/ttl", nil, client.PersistentTTL, client.WithTTL(time.Minute))
		assert.ErrorIs(t, err, client.ErrUnimplemented)
		if container {
			// The server's close races with its reply: a call cut off by
			// the lost connection reports an unknown outcome instead
			// (about one time in twenty here), and is made again.
			for range 10 {
				_, err = c.Create(ctx, base+"/container", nil, client.Container)
				if !client.IsOutcomeUnknown(err) && !client.IsRetryable(err) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			assert.ErrorIs(t, err, client.ErrUnimplemented)
		}
		// The session survives (on a new connection, if the server closed
		// it: a request sent meanwhile fails as retryable or, sent on the
		// closing connection, with an unknown outcome), and nothing was
		// created.
		for {
			_, err = c.Create(ctx, base+"/after", nil, client.Persistent)
			if !client.IsRetryable(err) && !client.IsOutcomeUnknown(err) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if !errors.Is(err, client.ErrNodeExists) {
			require.NoError(t, err)
		}
		kids, _, err := c.Children(ctx, base)
		require.NoError(t, err)
		assert.Equal(t, []string{"after"}, kids)
		assert.Equal(t, sess.ID(), c.Session().ID())
	}
	t.Run("zookeeper", func(t *testing.T) {
		// The shared server runs without extendedTypesEnabled.
		check(t, zktest.RealBackend(t).Servers, false)
	})
	t.Run("reference", func(t *testing.T) {
		s := zktest.NewServer(t, zktest.ServerWithoutTTL(), zktest.ServerWithoutContainers())
		check(t, s.Servers(), true)
	})
}

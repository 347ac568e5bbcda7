package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// An ancestor deleted between its create and its child's, as another
// process removes a directory it finds empty, is created again: two zkit
// bench runs on one ensemble failed with "create /bench/run-N: node does
// not exist" when one run's cleanup removed /bench under the other.
func TestEnsurePathRecreatesVanishedAncestor(t *testing.T) {
	t.Parallel()
	const rounds = 20
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		// The creating client's requests are slow each way, so that the
		// deleter, told of the directory at once, usually deletes it
		// before the create of the child arrives.
		proxy := zktest.NewProxy(t, b.Addr())
		c, deleter := connect(t, []string{proxy.Addr()}), connect(t, b.Servers)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		proxy.SetLatency(zktest.Scale(20 * time.Millisecond))
		deleted := 0
		for i := range rounds {
			dir := fmt.Sprintf("%s/r%d/x", base, i)
			_, _, created, err := deleter.ExistsW(ctx, dir)
			require.NoError(t, err)
			gone := make(chan struct{})
			go func() { // deletes dir once, as soon as it appears empty
				defer close(gone)
				if ev := <-created; ev.Type == client.EventNodeCreated && deleter.Delete(ctx, dir, -1) == nil {
					deleted++
				}
			}()
			require.NoError(t, c.EnsurePath(ctx, dir+"/y"), "round %d", i)
			<-gone
			ok, _, err := c.Exists(ctx, dir+"/y")
			require.NoError(t, err)
			require.True(t, ok, "round %d: %s/y missing", i, dir)
		}
		t.Logf("%s: the directory was deleted under EnsurePath in %d of %d rounds", b.Name, deleted, rounds)
		require.Positive(t, deleted, "the deleter never won: the test does not race")
	})
}

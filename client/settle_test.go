package client_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// A write answered just before its connection breaks succeeded: the reply
// that arrived wins over the break, and the caller is not told that the
// outcome is unknown.
func TestReplyBeforeBreakWins(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
		defer cancel()
		p := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(p.Dialer()))
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		for i := range 40 {
			// Connected again after the last cut (calls fail at once while
			// disconnected).
			require.Eventually(t, func() bool {
				_, _, err := c.Exists(ctx, base)
				return err == nil
			}, zktest.Scale(20*time.Second), time.Millisecond)
			p.CutAfterNextReply()
			_, err := c.Create(ctx, fmt.Sprintf("%s/n%d", base, i), nil, client.Persistent)
			require.NoError(t, err, "create %d, answered just before its connection broke", i)
		}
	})
}

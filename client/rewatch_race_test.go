package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Calls made the moment a client with watches reconnects do not race with
// the setting of its watches again, whose last zxid the reading goroutine
// moves on with every reply: run with -race, this test reported
// go-zookeeper's race on that zxid (go-zookeeper/zk#35) within a few
// reconnects. The watches set before each reconnect fire.
func TestCallsAtReconnectDoNotRace(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
		defer cancel()
		p := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(p.Dialer()))
		w := b.Connect(t)
		path := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, path))
		sub := c.Subscribe()
		defer sub.Close()
		for i := range 30 {
			var watches []<-chan client.WatchEvent
			for range 10 {
				_, _, ch, err := c.ExistsW(ctx, path)
				require.NoError(t, err)
				watches = append(watches, ch)
			}
			p.ResetAll()
			for ev := nextState(t, sub, 20*time.Second); ev.State != client.StateReconnected; ev = nextState(t, sub, 20*time.Second) {
				require.Equal(t, client.StateSuspended, ev.State, "reconnect %d", i)
			}
			_, _, err := c.Exists(ctx, path) // at once, as recipes re-read
			require.NoError(t, err, "reconnect %d", i)
			_, err = w.Set(ctx, path, nil, -1)
			require.NoError(t, err)
			for _, ch := range watches {
				select {
				case ev := <-ch:
					require.Equal(t, client.EventNodeDataChanged, ev.Type)
				case <-time.After(zktest.Scale(10 * time.Second)):
					t.Fatalf("reconnect %d: a watch set before it did not fire", i)
				}
			}
		}
	})
}

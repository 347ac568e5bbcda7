package client_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// A watch set right after a reconnect, on a node created while the client
// was away, fires only when the node changes: not at once because the
// SetWatches that re-set the older watches compared it with the zxid the
// last connection ended at (a lock waiter would take that for a release).
// The older watch still fires for what happened while the client was away.
func TestWatchSetAfterReconnectIsNotFiredBySetWatches(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		p := newProxied(t, b, zktest.Scale(4*time.Second))
		ctx := testCtx(t)
		for i := range 3 {
			older := p.base + "/older"
			_, err := p.observer.Create(ctx, older, nil, client.Persistent)
			require.NoError(t, err)
			_, _, olderW, err := p.c.GetW(ctx, older)
			require.NoError(t, err)

			p.partition(t)
			fresh, err := p.observer.Create(ctx, p.base+"/fresh-", nil, client.PersistentSequential)
			require.NoError(t, err)
			_, err = p.observer.Set(ctx, older, []byte("while away"), -1)
			require.NoError(t, err)
			p.proxy.Heal()
			require.Equal(t, client.StateReconnected, nextState(t, p.sub, 10*time.Second).State)

			_, _, freshW, err := p.c.GetW(ctx, fresh)
			require.NoError(t, err, "round %d", i)
			// The server sends what SetWatches fires before its reply, and
			// answers requests in order: after this round trip, a spurious
			// event would be in the channel.
			require.NoError(t, p.c.Sync(ctx, "/"))
			_, _, err = p.c.Get(ctx, fresh)
			require.NoError(t, err)
			select {
			case ev := <-freshW:
				t.Fatalf("round %d: a watch set after the reconnect fired without a change: %+v", i, ev)
			default:
			}
			select {
			case ev := <-olderW:
				require.Equal(t, client.EventNodeDataChanged, ev.Type, "round %d", i)
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: the older watch missed the write made while the client was away", i)
			}

			_, err = p.observer.Set(ctx, fresh, []byte("changed"), -1)
			require.NoError(t, err)
			select {
			case ev := <-freshW:
				require.Equal(t, client.EventNodeDataChanged, ev.Type)
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: no event after the change", i)
			}
			require.NoError(t, p.observer.Delete(ctx, older, -1))
		}
	})
}

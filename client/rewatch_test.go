package client_test

import (
	"fmt"
	"strings"
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
// The older watches still fire for what happened while the client was
// away: every kind together, and each kind alone (a SetWatches with an
// empty list must say so, not send a null one, which servers refuse).
func TestWatchSetAfterReconnectIsNotFiredBySetWatches(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		p := newProxied(t, b, zktest.Scale(4*time.Second))
		ctx := testCtx(t)
		type olderWatch struct {
			ch  <-chan client.WatchEvent
			typ client.EventType
		}
		for i, kinds := range []string{"data exist child", "data", "exist", "child"} {
			var olders []olderWatch
			older := p.base + "/older"
			_, err := p.observer.Create(ctx, older, nil, client.Persistent)
			require.NoError(t, err)
			if strings.Contains(kinds, "data") {
				_, _, w, err := p.c.GetW(ctx, older)
				require.NoError(t, err)
				olders = append(olders, olderWatch{w, client.EventNodeDataChanged})
			}
			absent := fmt.Sprintf("%s/absent-%d", p.base, i)
			if strings.Contains(kinds, "exist") {
				_, _, w, err := p.c.ExistsW(ctx, absent)
				require.NoError(t, err)
				olders = append(olders, olderWatch{w, client.EventNodeCreated})
			}
			if strings.Contains(kinds, "child") {
				_, _, w, err := p.c.ChildrenW(ctx, p.base)
				require.NoError(t, err)
				olders = append(olders, olderWatch{w, client.EventNodeChildrenChanged})
			}

			p.partition(t)
			fresh, err := p.observer.Create(ctx, p.base+"/fresh-", nil, client.PersistentSequential)
			require.NoError(t, err)
			_, err = p.observer.Set(ctx, older, []byte("while away"), -1)
			require.NoError(t, err)
			_, err = p.observer.Create(ctx, absent, nil, client.Persistent)
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
			for _, older := range olders {
				select {
				case ev := <-older.ch:
					require.Equal(t, older.typ, ev.Type, "round %d", i)
				case <-time.After(10 * time.Second):
					t.Fatalf("round %d: an older watch missed a %v made while the client was away", i, older.typ)
				}
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

// The watches set again on a new connection fire only for what changed
// since the client last heard from the server: SetWatches carries the
// zxid the last connection ended at, and a watch whose node did not
// change stays quiet until it does.
func TestWatchesSetAgainFireOnlyForChanges(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		p := newProxied(t, b, zktest.Scale(10*time.Second))
		ctx := testCtx(t)
		node := p.base + "/node"
		_, err := p.observer.Create(ctx, node, []byte("v1"), client.Persistent)
		require.NoError(t, err)
		_, _, data, err := p.c.GetW(ctx, node)
		require.NoError(t, err)
		_, _, exist, err := p.c.ExistsW(ctx, p.base+"/absent")
		require.NoError(t, err)
		_, _, child, err := p.c.ChildrenW(ctx, p.base)
		require.NoError(t, err)

		p.proxy.ResetAll()
		require.Equal(t, client.StateSuspended, nextState(t, p.sub, 10*time.Second).State)
		require.Equal(t, client.StateReconnected, nextState(t, p.sub, 10*time.Second).State)
		// What SetWatches fires comes before the reply to a later request.
		require.NoError(t, p.c.Sync(ctx, "/"))
		_, _, err = p.c.Get(ctx, node)
		require.NoError(t, err)
		for name, w := range map[string]<-chan client.WatchEvent{"data": data, "exist": exist, "child": child} {
			select {
			case ev := <-w:
				t.Fatalf("the %s watch fired on the reconnect without a change: %+v", name, ev)
			default:
			}
		}

		_, err = p.observer.Set(ctx, node, []byte("v2"), -1)
		require.NoError(t, err)
		_, err = p.observer.Create(ctx, p.base+"/absent", nil, client.Persistent)
		require.NoError(t, err)
		for name, want := range map[string]struct {
			w   <-chan client.WatchEvent
			typ client.EventType
		}{
			"data":  {data, client.EventNodeDataChanged},
			"exist": {exist, client.EventNodeCreated},
			"child": {child, client.EventNodeChildrenChanged},
		} {
			select {
			case ev := <-want.w:
				require.Equal(t, want.typ, ev.Type, name)
			case <-time.After(zktest.Scale(10 * time.Second)):
				t.Fatalf("the %s watch, set again, missed its change", name)
			}
		}
	})
}

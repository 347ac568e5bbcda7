package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// A burst of 1000 watch events and some state changes reaches a subscriber
// that does not read until the burst is over, with none lost and in order.
func TestSlowSubscriberLosesNothing(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()}, client.WithSessionTimeout(zktest.Scale(20*time.Second)))
		writer := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, writer.EnsurePath(ctx, base))

		const n = 1000
		sub := c.Subscribe()
		defer sub.Close()
		watches := make([]<-chan client.WatchEvent, n)
		for i := range n {
			ok, _, w, err := c.ExistsW(ctx, fmt.Sprintf("%s/n%04d", base, i))
			require.NoError(t, err)
			require.False(t, ok)
			watches[i] = w
		}
		for i := range n {
			_, err := writer.Create(ctx, fmt.Sprintf("%s/n%04d", base, i), nil, client.Persistent)
			require.NoError(t, err)
		}
		for i, w := range watches { // every one-shot watch fired
			select {
			case ev := <-w:
				require.Equal(t, client.EventNodeCreated, ev.Type)
				require.Equal(t, fmt.Sprintf("%s/n%04d", base, i), ev.Path)
			case <-time.After(zktest.Scale(30 * time.Second)):
				t.Fatalf("watch %d did not fire", i)
			}
		}
		proxy.ResetAll() // Suspended, then Reconnected
		eventually(t, 30*time.Second, "reconnect", func() bool {
			_, _, err := c.Exists(ctx, base)
			return err == nil
		})

		// Only now does the subscriber start reading.
		created := 0
		var states []client.State
		deadline := time.After(zktest.Scale(30 * time.Second))
		for created < n || len(states) < 2 {
			select {
			case ev := <-sub.Events():
				switch {
				case ev.State != client.StateNone:
					states = append(states, ev.State)
				case ev.Type == client.EventNodeCreated:
					require.Equal(t, fmt.Sprintf("%s/n%04d", base, created), ev.Path, "in order")
					created++
				}
			case <-deadline:
				t.Fatalf("got %d of %d watch events and states %v", created, n, states)
			}
		}
		assert.Equal(t, []client.State{client.StateSuspended, client.StateReconnected}, states)
	})
}

// A subscription made after Close has nothing to wait for: its channel is
// closed already.
func TestSubscribeAfterClose(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		c.Close()
		sub := c.Subscribe()
		defer sub.Close()
		select {
		case ev, ok := <-sub.Events():
			require.False(t, ok, "an event after Close: %+v", ev)
		case <-time.After(zktest.Scale(5 * time.Second)):
			t.Fatal("the subscription of a closed client stays open")
		}
	})
}

// A watch event carries the zxid of the transaction that fired it where
// the server says it (ZooKeeper 3.9 and later; the reference server with
// ServerWatchEventZxids), on the watch's channel, to subscribers and in
// persistent watches' feeds alike (a recursive feed's events of a child,
// and the children-changed event a non-recursive feed on the parent is
// told); 0 where it does not (ZooKeeper 3.8 and the reference server by
// default send -1): never a zxid of another transaction.
func TestWatchEventZxid(t *testing.T) {
	t.Parallel()
	for _, b := range recipetest.EventZxidBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			c, writer := b.Connect(t), b.Connect(t)
			ctx := testCtx(t)
			dir := zktest.UniquePath(t)
			path := dir + "/x"
			require.NoError(t, writer.EnsurePath(ctx, dir))
			recursive, err := c.Watch(ctx, dir, client.Recursive)
			require.NoError(t, err)
			defer recursive.Close()
			flat, err := c.Watch(ctx, dir, client.NonRecursive)
			require.NoError(t, err)
			defer flat.Close()
			_, err = writer.Create(ctx, path, nil, client.Persistent)
			require.NoError(t, err)
			created := writer.LastZxid()
			sub := c.Subscribe()
			defer sub.Close()
			_, _, deleted, err := c.GetW(ctx, path)
			require.NoError(t, err)
			require.NoError(t, writer.Delete(ctx, path, -1))
			want := int64(0)
			if b.SendsZxid {
				want = writer.LastZxid() // the delete's
			} else {
				created = 0
			}
			ev := <-deleted
			assert.Equal(t, client.WatchEvent{Type: client.EventNodeDeleted, Path: path, Zxid: want}, ev)
			for e := range sub.Events() {
				if e.Type == client.EventNodeDeleted {
					assert.Equal(t, want, e.Zxid, "the subscriber's event")
					break
				}
			}
			assert.Equal(t, client.WatchEvent{Type: client.EventNodeCreated, Path: path, Zxid: created}, <-recursive.Events(), "the recursive feed")
			assert.Equal(t, client.WatchEvent{Type: client.EventNodeDeleted, Path: path, Zxid: want}, <-recursive.Events(), "the recursive feed")
			for _, zxid := range []int64{created, want} {
				assert.Equal(t, client.WatchEvent{Type: client.EventNodeChildrenChanged, Path: dir, Zxid: zxid},
					<-flat.Events(), "the non-recursive feed")
			}
		})
	}
}

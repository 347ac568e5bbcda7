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

// A subscriber that does not read holds up to its buffer of events; the
// one more that a flood of watch events brings ends its subscription, at
// once: the queued events are dropped, its channel is closed, and Err
// says it overflowed, with how many events were unread. A subscriber that
// reads as the events come sees them all, through many times its buffer;
// a subscription made after the overflow works.
func TestSubscriptionOverflow(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const bound = 50
		c := b.Connect(t, client.WithSubscriptionBuffer(bound))
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		feed, err := c.Watch(ctx, base, client.Recursive, client.WithWatchBuffer(10*bound))
		require.NoError(t, err)
		defer feed.Close()
		// creates makes n children of base, each a watch event of the
		// feed's (before the reply: see Watch) that every subscriber is
		// told of.
		next := 0
		creates := func(n int) {
			t.Helper()
			ops := make([]client.Op, n)
			for i := range ops {
				ops[i] = client.CreateOp(fmt.Sprintf("%s/n%04d", base, next), nil, client.Persistent)
				next++
			}
			_, err := c.Multi(ctx, ops...)
			require.NoError(t, err)
		}

		idle := c.Subscribe() // never read until the end
		defer idle.Close()
		reader := c.Subscribe()
		defer reader.Close()
		got := make(chan client.Event, 10*bound)
		go func() {
			for ev := range reader.Events() {
				got <- ev
			}
			close(got)
		}()
		// A reader that keeps up: in step with the writes, through many
		// times its buffer.
		for range 4 * bound {
			creates(1)
			select {
			case ev := <-got:
				require.Equal(t, client.EventNodeCreated, ev.Type)
			case <-time.After(zktest.Scale(10 * time.Second)):
				t.Fatalf("the reader got no event: %v", reader.Err())
			}
		}
		assert.NoError(t, reader.Err())
		reader.Close()
		require.ErrorIs(t, idle.Err(), client.ErrSubscriptionOverflow, "the idle subscriber")

		// A burst of watch events over a new subscriber's buffer: exactly
		// its buffer is held; one more ends it.
		flooded := c.Subscribe()
		defer flooded.Close()
		creates(bound)
		require.NoError(t, flooded.Err(), "a subscriber holds its buffer")
		creates(1)
		err = flooded.Err()
		require.ErrorIs(t, err, client.ErrSubscriptionOverflow)
		assert.Contains(t, err.Error(), fmt.Sprintf("(%d events unread)", bound))
		n := 0
		for range flooded.Events() { // closed already, its events dropped
			n++
		}
		assert.Zero(t, n, "events of an overflowed subscription")

		// The idle subscriber's channel is closed too, and its Err stays
		// after Close.
		_, ok := <-idle.Events()
		assert.False(t, ok, "the idle subscriber's channel")
		idle.Close()
		assert.ErrorIs(t, idle.Err(), client.ErrSubscriptionOverflow)

		// A new subscription after all that sees the next event.
		again := c.Subscribe()
		defer again.Close()
		creates(1)
		select {
		case ev := <-again.Events():
			assert.Equal(t, client.EventNodeCreated, ev.Type)
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("a new subscription got no event")
		}
		assert.NoError(t, again.Err())
	})
}

// Err is nil while a subscription runs and after Close; ErrClosed once the
// client is closed, after StateClosed, the last event; and ErrClosed at
// once for a subscription made after that.
func TestSubscriptionErr(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		closed := c.Subscribe()
		assert.NoError(t, closed.Err())
		closed.Close()
		_, ok := <-closed.Events()
		assert.False(t, ok)
		assert.NoError(t, closed.Err(), "after Close")

		sub := c.Subscribe()
		defer sub.Close()
		c.Close()
		var last client.Event
		for ev := range sub.Events() {
			last = ev
		}
		assert.Equal(t, client.StateClosed, last.State)
		assert.ErrorIs(t, sub.Err(), client.ErrClosed)
		sub.Close()
		assert.ErrorIs(t, sub.Err(), client.ErrClosed, "after a Close that came after")

		late := c.Subscribe()
		defer late.Close()
		assert.ErrorIs(t, late.Err(), client.ErrClosed)
	})
}

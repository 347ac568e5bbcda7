package recipes_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// A holder whose node was alone in the queue at its last look (when it
// joined, here) releases with a plain delete; a holder that found another
// node there releases with the signal (NodeDataChanged on the node before
// it goes).
func TestReleaseSignalOnlyWhenOthersWereThere(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c1, c2, observer := b.Connect(t), b.Connect(t), b.Connect(t)
		dir := recipetest.LockDir(t, c1)
		released := func(l *recipes.Lease) client.EventType {
			_, _, ch, err := observer.GetW(ctx, l.Node())
			require.NoError(t, err)
			require.NoError(t, l.Unlock(ctx))
			select {
			case ev := <-ch:
				return ev.Type
			case <-ctx.Done():
				t.Fatal("no event on the released node")
				return 0
			}
		}

		alone, err := recipes.NewQueue(c1, dir, nil, recipes.MutexKind).Acquire(ctx, mutex)
		require.NoError(t, err)
		require.Equal(t, client.EventNodeDeleted, released(alone), "alone when it joined: a plain delete")

		first, err := recipes.NewQueue(c1, dir, nil, recipes.MutexKind).Acquire(ctx, mutex)
		require.NoError(t, err)
		q2 := recipes.NewQueue(c2, dir, nil, recipes.MutexKind)
		second := acquire(ctx, q2.Acquire)
		recipetest.Eventually(t, "the second waits", func() bool { return len(recipetest.Children(t, c1, dir)) == 2 })
		// Waiting on the first's node: had it looked after the first
		// was gone, it would have been alone at that look.
		recipetest.WaitWatched(t, b, c2.Session(), first.Node())
		require.Equal(t, client.EventNodeDeleted, released(first), "alone when it joined, with a waiter since")
		r := <-second
		require.NoError(t, r.err)
		require.Equal(t, client.EventNodeDataChanged, released(r.l), "the first was there when it joined: the signal")
	})
}

// A release whose reply is lost (the connection breaks after the server
// applied it) is settled by Unlock itself: it deletes again on the next
// connection, finds the node gone, and returns nil while ctx lasts.
func TestUnlockRidesOutALostReply(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		p := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(p.Dialer()))
		sub := c.Subscribe()
		defer sub.Close()
		dir := recipetest.LockDir(t, admin)
		// Held after waiting behind admin: the holder already watches its
		// node, so the release is its next request.
		first, err := recipes.NewQueue(admin, dir, nil, recipes.MutexKind).Acquire(ctx, mutex)
		require.NoError(t, err)
		next := acquire(ctx, recipes.NewQueue(c, dir, nil, recipes.MutexKind).Acquire)
		recipetest.WaitChildren(t, admin, dir, 2)
		require.NoError(t, first.Unlock(ctx))
		l := (<-next).must(t)
		p.CutAfterNextRequest()
		require.NoError(t, l.Unlock(ctx), "a release whose reply was lost")
		require.True(t, recipetest.WaitEventFor(t, sub, zktest.Scale(5*time.Second), func(ev client.Event) bool {
			return ev.State == client.StateSuspended
		}), "the release's reply was not lost")
		recipetest.WaitChildren(t, admin, dir, 0)
	})
}

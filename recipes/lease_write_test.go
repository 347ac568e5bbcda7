package recipes_test

import (
	"errors"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// Update writes only the lease of a node whose waiters confirm their turn:
// a lock's lease (whose waiters would take the write for its release) is
// refused with an *client.InputError, and so is data over the server's
// limit; nothing is sent, and both leases stay held.
func TestUpdateRefused(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		proxy := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(proxy.Dialer()))
		lock, err := recipes.NewQueue(c, recipetest.LockDir(t, c), nil, recipes.MutexKind).Acquire(ctx, mutex)
		if err != nil {
			t.Fatal(err)
		}
		latch := recipes.LatchKind
		leader, err := recipes.NewQueue(c, recipetest.LockDir(t, c), nil, latch).Acquire(ctx, recipes.AcquireOptions{Kind: latch})
		if err != nil {
			t.Fatal(err)
		}
		// Each lease's monitor watches its node, once, in the background:
		// not a request of the calls under test.
		recipetest.WaitWatched(t, b, c.Session(), lock.Node())
		recipetest.WaitWatched(t, b, c.Session(), leader.Node())
		sent := proxy.Requests()
		var ie *client.InputError
		if err := lock.Update(ctx, []byte("x")); !errors.As(err, &ie) {
			t.Fatalf("Update of a lock's lease: %v, want an *client.InputError", err)
		}
		if err := leader.Update(ctx, make([]byte, c.MaxData(leader.Node())+1)); !errors.As(err, &ie) {
			t.Fatalf("Update with too much data: %v, want an *client.InputError", err)
		}
		if n := proxy.Requests() - sent; n != 0 {
			t.Fatalf("refused updates sent %d requests", n)
		}
		if lock.Err() != nil || leader.Err() != nil {
			t.Fatalf("refused updates ended the leases: %v, %v", lock.Err(), leader.Err())
		}
		if err := recipes.UnlockAll(ctx, lock, leader); err != nil {
			t.Fatal(err)
		}
	})
}

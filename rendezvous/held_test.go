package rendezvous_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/rendezvous"
	"github.com/zkit-dev/zkit/zktest"
)

// A master's Publication fences writes like every held thing: Token,
// Guard and Multi are its current presence's, refused once its session
// has expired and until zr is published again.
func TestPublicationFencing(t *testing.T) {
	recipetest.RunKeptFencing(t, func(t *testing.T, c *client.Client, path string, tolerance time.Duration) recipetest.Kept {
		pub, err := rendezvous.New(c, path, rendezvous.WithSuspendTolerance(tolerance)).PublishEphemeral(recipetest.Context(t), []byte("m:7000"))
		if err != nil {
			t.Fatal(err)
		}
		return pub
	})
}

// The launcher's Launch fences writes too: applied while it holds zr,
// refused for good once its session has expired (zr is never created
// again).
func TestLaunchFencing(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		dir := zktest.UniquePath(t)
		path, target := dir+"/zr", dir+"/fenced"
		if err := admin.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Create(ctx, target, nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
		write := func(data string) client.Op { return client.SetOp(target, []byte(data), -1) }
		c := b.Connect(t)
		launch, err := rendezvous.New(c, path, rendezvous.WithSuspendTolerance(time.Hour)).Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ok, st, err := admin.Exists(ctx, launch.Node())
		if err != nil || !ok || st.Czxid != launch.Token() || st.EphemeralOwner != launch.Session().ID() {
			t.Fatalf("zr (exists %v, err %v): Token and Session are not its czxid and owner", ok, err)
		}
		if _, err := launch.Multi(ctx, write("held")); err != nil {
			t.Fatalf("fenced write while held: %v", err)
		}
		if _, err := c.Multi(ctx, launch.Guard(), write("guarded")); err != nil {
			t.Fatalf("write carrying Guard while held: %v", err)
		}
		b.ExpireSession(t, launch.Session())
		recipetest.Within(t, launch.Done(), "Done after the session expired")
		_, err = launch.Multi(ctx, write("stale"))
		if !errors.Is(err, rendezvous.ErrLost) || !errors.Is(err, client.ErrSessionLost) {
			t.Fatalf("fenced write after the session expired = %v, want ErrLost and ErrSessionLost", err)
		}
		if _, err := admin.Multi(ctx, launch.Guard(), write("stale")); !errors.Is(err, client.ErrNoNode) {
			t.Fatalf("write carrying the old Guard = %v, want ErrNoNode", err)
		}
		data, st, err := admin.Get(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != "guarded" || st.Version != 2 {
			t.Fatalf("fenced node holds %q at version %d, want the 2 writes made while held", data, st.Version)
		}
	})
}

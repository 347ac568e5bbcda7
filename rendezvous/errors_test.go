package rendezvous_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/rendezvous"
	"github.com/zkit-dev/zkit/zktest"
)

// Every error of a call names zr's path once (and the call, unless it is
// the error of a client call on zr); on a closed client every call fails
// with client.ErrClosed.
func TestErrorsNamePathOnce(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := zrPath(t)
		c := b.Connect(t)
		zr := rendezvous.New(c, path)

		err := zr.Publish(ctx, []byte("x"))
		if !errors.Is(err, rendezvous.ErrGone) {
			t.Errorf("Publish before Create = %v, want ErrGone", err)
		}
		recipetest.NamesPath(t, "Publish before Create", err, "publish", path)
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		_, err = zr.Wait(cancelled)
		recipetest.NamesPath(t, "Wait with a cancelled context", err, "wait", path)

		lc := b.Connect(t)
		launch, err := rendezvous.New(lc, path).Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = zr.Create(ctx)
		recipetest.NamesPath(t, "Create of a taken zr", err, "", path)
		_, err = zr.PublishEphemeral(ctx, []byte("x"))
		recipetest.NamesPath(t, "PublishEphemeral over the launcher's zr", err, "", path)
		waiting := make(chan error, 1)
		wc := b.Connect(t) // a session of its own, that has no other watch on zr
		go func() { _, err := rendezvous.New(wc, path).Wait(ctx); waiting <- err }()
		// Wait must have seen zr before it goes (it waits for a zr it
		// never saw to be created).
		recipetest.WaitWatched(t, b, wc.Session(), path)
		lc.Close()
		recipetest.Within(t, launch.Done(), "Done after the launcher's client closed")
		err = <-waiting
		if !errors.Is(err, rendezvous.ErrGone) {
			t.Errorf("Wait when the launcher ended = %v, want ErrGone", err)
		}
		recipetest.NamesPath(t, "Wait when the launcher ended", err, "wait", path)
		_, err = launch.Multi(ctx, client.CheckOp("/", -1))
		recipetest.NamesPath(t, "Multi after the launcher's client closed", err, "multi", path)
		recipetest.NamesPath(t, "Remove after the launcher's client closed", launch.Remove(ctx), "remove", path)

		// The client closed.
		pub, err := zr.PublishEphemeral(ctx, []byte("m:1"))
		if err != nil {
			t.Fatal(err)
		}
		feed := zr.Watch(ctx)
		<-feed.Values()
		c.Close()
		closed := func(what string, err error, op string) {
			t.Helper()
			if !errors.Is(err, client.ErrClosed) {
				t.Errorf("%s on a closed client = %v, want client.ErrClosed", what, err)
			}
			recipetest.NamesPath(t, what+" on a closed client", err, op, path)
		}
		_, err = zr.Create(ctx)
		closed("Create", err, "")
		_, err = zr.PublishEphemeral(ctx, []byte("x"))
		closed("PublishEphemeral", err, "")
		closed("Publish", zr.Publish(ctx, []byte("x")), "")
		_, err = zr.Wait(ctx)
		closed("Wait", err, "")
		_, err = pub.Present(ctx)
		closed("Present", err, "present")
		closed("Update", pub.Update(ctx, []byte("y")), "")
		_, err = pub.Multi(ctx, client.CheckOp("/", -1))
		closed("Multi", err, "multi")
		closed("Remove", pub.Remove(ctx), "remove")
		for range feed.Values() {
		}
		if !errors.Is(feed.Err(), client.ErrClosed) {
			t.Errorf("Watch on a closed client ended with %v, want client.ErrClosed", feed.Err())
		}
	})
}

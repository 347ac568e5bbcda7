package membership_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/zktest"
)

// Every error of a call names the call's path once (and the call, unless
// it is the error of a client call on that path); on a closed client every
// call fails with client.ErrClosed.
func TestErrorsNamePathOnce(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := groupPath(t, admin)
		c := b.Connect(t)
		g := membership.New(c, path)
		m, err := g.Join(ctx, "w", nil)
		if err != nil {
			t.Fatal(err)
		}
		node := m.Node()

		_, err = membership.New(b.Connect(t), path).Join(ctx, "w", nil)
		recipetest.NamesPath(t, "Join of a taken id", err, "", node)
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		_, err = g.Join(cancelled, "v", nil)
		recipetest.NamesPath(t, "Join with a cancelled context", err, "", path+"/v")
		_, err = g.List(cancelled)
		recipetest.NamesPath(t, "List with a cancelled context", err, "", path)

		// A foreign write: the member stops with a conflict.
		if _, err := admin.Set(ctx, node, []byte("theirs"), -1); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, m.Done(), "Done after a foreign write")
		_, err = m.Present(ctx)
		recipetest.NamesPath(t, "Present after a conflict", err, "", node)
		recipetest.NamesPath(t, "Update after a conflict", m.Update(ctx, []byte("x")), "", node)
		_, err = m.Multi(ctx, client.CheckOp(path, -1))
		recipetest.NamesPath(t, "Multi after a conflict", err, "", node)
		recipetest.NamesPath(t, "Leave after a conflict", m.Leave(ctx), "", node)
		_, err = m.Multi(ctx, client.CheckOp(path, -1))
		recipetest.NamesPath(t, "Multi after Leave", err, "", node)

		left, err := g.Join(ctx, "left", nil)
		if err != nil {
			t.Fatal(err)
		}
		left.Leave(ctx)
		_, err = left.Present(ctx)
		recipetest.NamesPath(t, "Present after Leave", err, "present", left.Node())
		_, err = left.Multi(ctx, client.CheckOp(path, -1))
		recipetest.NamesPath(t, "Multi after Leave", err, "multi", left.Node())

		// The client closed.
		kept, err := g.Join(ctx, "kept", nil)
		if err != nil {
			t.Fatal(err)
		}
		feed := g.Watch(ctx)
		<-feed.Values()
		c.Close()
		closed := func(what string, err error, op, path string) {
			t.Helper()
			if !errors.Is(err, client.ErrClosed) {
				t.Errorf("%s on a closed client = %v, want client.ErrClosed", what, err)
			}
			recipetest.NamesPath(t, what+" on a closed client", err, op, path)
		}
		_, err = g.Join(ctx, "late", nil)
		closed("Join", err, "", path+"/late")
		_, err = g.List(ctx)
		closed("List", err, "", path)
		_, err = kept.Present(ctx)
		closed("Present", err, "present", kept.Node())
		_, err = kept.Multi(ctx, client.CheckOp(path, -1))
		closed("Multi", err, "multi", kept.Node())
		closed("Leave", kept.Leave(ctx), "", kept.Node())
		for range feed.Values() {
		}
		if !errors.Is(feed.Err(), client.ErrClosed) {
			t.Errorf("Watch on a closed client ended with %v, want client.ErrClosed", feed.Err())
		}
	})
}

package discovery_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/internal/recipetest"
)

// A registry whose base and service nodes do not exist yet, with the
// ensemble's leader killed while the first instances create them and
// their nodes, then again while they unregister: every Register and
// Unregister succeeds (no session is lost), each instance's node is owned
// by its session, the base and service nodes have the ACL, and the emptied
// service node, a container, goes while the base stays.
func TestFailoverWhileCreatingService(t *testing.T) {
	recipetest.EachFault(t, recipetest.LeaderKillsBeforeAndAfter, func(t *testing.T, e *recipetest.Ensemble, f recipetest.Fault) {
		clients := e.Clients(t, 4)
		base, parents := recipetest.UnderMissingParents(t, "services")
		service := base + "/api"
		regs := make([]*discovery.Registration, len(clients))
		e.Run(t, f, len(clients), func(ctx context.Context, i int) {
			r, err := discovery.New(clients[i], base, discovery.WithACL(recipetest.NoAdminACL...)).Register(ctx,
				discovery.Instance{Name: "api", ID: fmt.Sprint("i", i), Address: "127.0.0.1", Port: 8000 + i})
			if err != nil {
				t.Errorf("Register: %v", err)
			}
			regs[i] = r
		})
		if t.Failed() {
			t.FailNow()
		}
		c, ctx := clients[0], recipetest.Context(t)
		ch, _, err := c.Children(ctx, service)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ch)
		if len(ch) != len(clients) {
			t.Fatalf("instances %q, want %d", ch, len(clients))
		}
		for i, name := range ch {
			_, st, err := c.Get(ctx, service+"/"+name)
			if want := clients[i].Session().ID(); err != nil || name != fmt.Sprint("i", i) || st.EphemeralOwner != want {
				t.Errorf("instance %s (%v) not owned by i%d's session", name, err, i)
			}
		}
		recipetest.Layout{Persistent: append(parents, base, service), ACL: recipetest.NoAdminACL}.Require(t, c)
		e.Run(t, f, len(regs), func(ctx context.Context, i int) {
			if err := regs[i].Unregister(ctx); err != nil {
				t.Errorf("Unregister: %v", err)
			}
		})
		recipetest.Layout{Containers: []string{service}, Persistent: append(parents, base)}.Require(t, c)
	})
}

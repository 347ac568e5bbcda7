package discovery_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// The service's node stays a container, with the registry's ACL, when the
// instance is registered again after the server deleted it (its last
// instance was gone meanwhile): once the instance is unregistered, the
// server deletes the service's node again, instead of Services listing it
// for ever.
func TestServiceNodeStaysContainer(t *testing.T) {
	interval := zktest.Scale(100 * time.Millisecond)
	zktest.EachBackendWith(t, []zktest.Option{zktest.WithContainerCheckInterval(interval)},
		[]zktest.ServerOption{zktest.ServerContainerCheckInterval(interval)}, func(t *testing.T, b zktest.Backend) {
			ctx := recipetest.Context(t)
			admin := b.Connect(t)
			base := basePath(t, admin)
			service := base + "/api"
			gone := func() bool {
				ok, _, err := admin.Exists(ctx, service)
				if err != nil {
					t.Fatal(err)
				}
				return !ok
			}
			opts, cut, heal := b.Blackhole(t)
			c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(10*time.Second)))...)
			acl := client.WorldACL(client.PermAll &^ client.PermAdmin)
			r, err := discovery.New(c, base, discovery.WithACL(acl...)).Register(ctx, instance("w", 1))
			if err != nil {
				t.Fatal(err)
			}
			// Cut off, the registration cannot create its node again before
			// the server has deleted the emptied service node.
			cut()
			if err := admin.Delete(ctx, r.Node(), -1); err != nil {
				t.Fatal(err)
			}
			recipetest.Eventually(t, "the emptied service node deleted", gone)
			heal()
			eventuallyInstances(t, discovery.New(admin, base), "api", "w@10.0.0.1:8001")
			if got, _, err := admin.GetACL(ctx, service); err != nil || !reflect.DeepEqual(got, acl) {
				t.Fatalf("the service node created again has the ACL %v (%v), want %v", got, err, acl)
			}
			if err := r.Unregister(ctx); err != nil {
				t.Fatal(err)
			}
			recipetest.Eventually(t, "the service node deleted after the last instance was unregistered", gone)
		})
}

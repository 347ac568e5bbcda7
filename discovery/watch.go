package discovery

import (
	"context"
	"slices"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Watch follows the instances of service and delivers all of them, sorted
// by node name, disabled ones included, whenever one is registered,
// unregistered or updated. It is built on recipes.Follow and
// level-triggered like it: the Values channel holds only the latest
// snapshot, and after churn, a burst or a reconnect the last snapshot
// delivered is the true set of instances. A service without a node is an
// empty snapshot. Nodes whose data is not an instance are left out (and
// logged, WithLogger).
//
// While the connection is suspended the last snapshot stands; it is read
// again once the client is connected, under the same session or a new one.
// The feed ends when ctx ends, when the client is closed
// (client.ErrClosed), or on an error retrying cannot cure (an invalid base
// or service name: an *client.InputError, before anything is sent).
func (d *Discovery) Watch(ctx context.Context, service string) *recipes.Feed[[]Instance] {
	path := client.JoinPath(d.base, service)
	check := recipes.CheckName("watch", d.base, "service name", service)
	var instances recipes.ReadFunc[[]Instance]
	if check == nil {
		instances = recipes.ChildrenReader(ctx, d.c, path, d.decoder(path))
	}
	read := func(ctx context.Context) ([]Instance, <-chan client.WatchEvent, error) {
		if check != nil {
			return nil, nil, check
		}
		found, w, err := instances(ctx)
		return found, w, recipes.Wrap("watch", path, err)
	}
	return recipes.Follow(ctx, d.c, read, sameInstances)
}

// sameInstances reports whether two snapshots show the same nodes at the
// same versions.
func sameInstances(a, b []Instance) bool {
	return slices.EqualFunc(a, b, func(x, y Instance) bool {
		return x.Path == y.Path && x.Stat.Czxid == y.Stat.Czxid && x.Stat.Mzxid == y.Stat.Mzxid
	})
}

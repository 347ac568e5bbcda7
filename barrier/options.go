package barrier

import (
	"log/slog"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Option configures a Double or a Barrier.
type Option func(*config)

type config struct {
	recipes.Options
}

func newConfig(opts []Option) config {
	cfg := recipes.Apply(opts)
	cfg.Logger = cfg.Log()
	return cfg
}

// WithACL gives the nodes the barrier creates (its directory, member nodes,
// the ready node, a simple barrier's node) acl instead of the client's
// default ACL. Every member must be able to read the directory, delete its
// own node and write the directory's data: a double barrier's members
// record their leave there.
func WithACL(acl ...client.ACL) Option {
	return func(c *config) { c.ACL = acl }
}

// WithLogger routes the barrier's log lines (members lost, cleanups that
// failed) to l. By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.Logger = l }
}

package barrier

import (
	"log/slog"

	"github.com/zkit-dev/zkit/client"
)

// Option configures a Double or a Barrier.
type Option func(*config)

type config struct {
	acl []client.ACL
	log *slog.Logger
}

func newConfig(opts []Option) config {
	cfg := config{log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// WithACL gives the nodes the barrier creates (its directory, member nodes,
// the ready node, a simple barrier's node) acl instead of the client's
// default ACL. Every member must be able to read the directory, delete its
// own node and write the directory's data: a double barrier's members
// record their leave there.
func WithACL(acl ...client.ACL) Option {
	return func(c *config) { c.acl = acl }
}

// WithLogger routes the barrier's log lines (members lost, cleanups that
// failed) to l. By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.log = l
		}
	}
}

// createOptions is the ACL option for client.Create, if one was given.
func (c config) createOptions() []client.CreateOption {
	if len(c.acl) == 0 {
		return nil
	}
	return []client.CreateOption{client.WithACL(c.acl...)}
}

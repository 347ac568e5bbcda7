package discovery

import (
	"log/slog"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Option configures a Discovery: every Register on it, and its readers'
// logging.
type Option func(*config)

type config struct {
	recipes.Options
}

// WithSuspendTolerance lets a registration stay present across a
// suspended connection for up to d. The default, 0, ends the presence as
// soon as the connection is suspended: from then on the session may
// expire at any moment and the node vanish. Either way the instance is
// present again (a new Presence) as soon as zkit has checked its node
// after the reconnect.
func WithSuspendTolerance(d time.Duration) Option {
	return func(c *config) { c.SuspendTolerance = d }
}

// WithACL gives the nodes Register creates acl instead of the client's
// default ACL: the instance's node, and the service's node and the base
// when it creates them. Other clients (Curator's included) register
// instances of a service only if acl lets them create children of its
// node.
func WithACL(acl ...client.ACL) Option {
	return func(c *config) { c.ACL = acl }
}

// WithLogger routes the log lines of registrations (presences ending and
// coming back, conflicts) and of readers (instance nodes left out because
// their data is not an instance) to l. By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.Logger = l }
}

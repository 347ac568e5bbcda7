package configwatch

import (
	"log/slog"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Option configures a Config.
type Option func(*config)

type config struct {
	recipes.Options
	atomic bool
}

// WithAtomic makes Set and Publish write in one transaction (a multi)
// instead of with the ready flag: readers never wait, and concurrent
// atomic publishers each apply whole. The whole publish must fit in one
// request (the server's jute.maxbuffer, 1 MB by default; a larger one is an
// *client.InputError before anything is written); larger configurations
// use the flag. Readers read either kind alike.
func WithAtomic() Option { return func(c *config) { c.atomic = true } }

// WithACL gives the nodes a publish creates (the configuration node, its
// keys, ready) acl instead of the client's default ACL. Missing ancestors
// of the configuration node get the client's default ACL, and nodes that
// exist keep theirs. Readers need the READ permission on the configuration
// node and its keys.
func WithACL(acl ...client.ACL) Option { return func(c *config) { c.ACL = acl } }

// WithLogger routes the configuration's log lines (each completed
// publish, at debug level) to l. By default nothing is logged.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.Logger = l } }

package rendezvous

import (
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Rendezvous is the rendezvous node zr at a ZooKeeper path, for each of
// its roles: the launcher creates it (Create), the master fills it
// (Publish) or owns it (PublishEphemeral), the workers wait for it (Wait,
// Watch). It is safe for concurrent use, and holds nothing itself: what
// Create and PublishEphemeral hold is a Launch and a Publication.
type Rendezvous struct {
	c    *client.Client
	path string
	cfg  config
}

// New returns the rendezvous at path. It does no I/O: the path is checked
// by every call, before anything is sent. The options apply to Create and
// PublishEphemeral.
func New(c *client.Client, path string, opts ...Option) *Rendezvous {
	cfg := recipes.Apply(opts)
	return &Rendezvous{c: c, path: path, cfg: cfg}
}

// Path is zr's path.
func (r *Rendezvous) Path() string { return r.path }

// checkPath returns an *client.InputError for a path zr cannot be
// created or filled at: an invalid one, or the root.
func checkPath(op, path string) error {
	if reason := client.ValidatePath(path, false); reason != "" {
		return &client.InputError{Op: op, Path: path, Reason: reason}
	}
	if path == "/" {
		return &client.InputError{Op: op, Path: path, Reason: "the root cannot be a rendezvous node"}
	}
	return nil
}

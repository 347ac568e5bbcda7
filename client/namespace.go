package client

import (
	"context"
	"fmt"
	"strings"

	"github.com/zkit-dev/zkit/internal/jute"
)

// WithNamespace roots every path of the client at ns (Curator's namespace,
// ZooKeeper's chroot): Create(ctx, "/locks/a", ...) creates ns+"/locks/a",
// and every path the client returns or delivers (created paths, Multi
// results, watch events) is relative to ns again. Paths outside ns cannot
// be reached through the client; "/" is ns itself. Recipes built on the
// client work unchanged inside a namespace.
//
// ns must be a valid absolute path other than "/"; Connect creates it (and
// its ancestors, with the client's default ACL) once the first session is
// established, and fails if it cannot (see WithExistingNamespace for a
// client that creates nothing).
func WithNamespace(ns string) Option {
	return func(c *config) { c.namespace = ns }
}

// WithExistingNamespace makes Connect leave the namespace of WithNamespace
// as it finds it: instead of creating it, Connect checks that it exists,
// and fails with an error that names it and matches ErrNoNode if it does
// not. It is for clients that only read, which should leave no node
// behind. Without a namespace it does nothing.
func WithExistingNamespace() Option {
	return func(c *config) { c.nsMode = nsCheck }
}

// WithNamespaceAsIs makes Connect leave the namespace of WithNamespace
// alone: it neither creates it nor checks that it exists. A call on a node
// of a missing namespace then fails with ErrNoNode, as for any missing
// node, and a watch set on one (ExistsW) fires once the namespace and the
// node are created. It is for clients that wait for nodes that may not
// exist yet, without leaving a node behind. Without a namespace it does
// nothing.
func WithNamespaceAsIs() Option {
	return func(c *config) { c.nsMode = nsAsIs }
}

// What Connect does with the namespace.
const (
	nsCreate = iota // create it (the default)
	nsCheck         // check that it exists (WithExistingNamespace)
	nsAsIs          // nothing (WithNamespaceAsIs)
)

// Namespace is the client's namespace, or "" for none.
func (c *Client) Namespace() string { return c.cfg.namespace }

// abs turns a path of the caller's into the server's.
func (c *Client) abs(path string) string {
	ns := c.cfg.namespace
	switch {
	case ns == "":
		return path
	case path == "/":
		return ns
	}
	return ns + path
}

// rel turns a path of the server's into the caller's.
func (c *Client) rel(path string) string {
	ns := c.cfg.namespace
	switch {
	case ns == "" || path == "":
		return path
	case path == ns:
		return "/"
	case strings.HasPrefix(path, ns+"/"):
		return path[len(ns):]
	}
	return path
}

// checkNamespace refuses a namespace that is not a valid path.
func checkNamespace(ns string) error {
	if ns == "" {
		return nil
	}
	if ns == "/" {
		return &InputError{Op: "connect", Path: ns, Reason: "namespace \"/\": give a path below the root, or no namespace"}
	}
	if reason := ValidatePath(ns, false); reason != "" {
		return &InputError{Op: "connect", Path: ns, Reason: "namespace: " + reason}
	}
	return nil
}

// openNamespace creates the namespace, or with WithExistingNamespace checks
// that it exists, or with WithNamespaceAsIs does nothing.
func (c *Client) openNamespace(ctx context.Context) error {
	switch {
	case c.cfg.namespace == "" || c.cfg.nsMode == nsAsIs:
		return nil
	case c.cfg.nsMode == nsCreate:
		return c.createNamespace(ctx)
	}
	var exists bool
	err := c.Retry(ctx, func(ctx context.Context) (err error) {
		exists, _, err = c.Exists(ctx, "/") // the namespace's own node
		return err
	})
	switch {
	case err != nil:
		return fmt.Errorf("zkit: namespace %s: %w", c.cfg.namespace, err)
	case !exists:
		return fmt.Errorf("zkit: namespace %s does not exist: %w", c.cfg.namespace, ErrNoNode)
	}
	return nil
}

// createNamespace makes the namespace node and its ancestors exist, with
// the client's default ACL. The paths are the server's: the namespace is
// outside itself.
func (c *Client) createNamespace(ctx context.Context) error {
	ns := c.cfg.namespace
	for i := 1; ns != "" && i <= len(ns); i++ {
		if i < len(ns) && ns[i] != '/' {
			continue
		}
		dir := ns[:i]
		err := c.Retry(ctx, func(ctx context.Context) error {
			_, err := doDirect(c, request{"create", dir, true}, func() (struct{}, error) {
				req := &jute.CreateRequest{Path: dir, ACL: juteACL(c.cfg.defaultACL), Flags: int32(Persistent)}
				_, err := direct(ctx, c, jute.OpCreate, req, nil)
				return struct{}{}, err
			})
			return dirCreated(ctx, err)
		})
		if err != nil {
			return fmt.Errorf("zkit: create namespace %s: %w", ns, err)
		}
	}
	return nil
}

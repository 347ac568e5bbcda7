package recipes

import (
	"context"
	"fmt"
	"strings"

	"github.com/zkit-dev/zkit/client"
)

// CheckDir returns an *client.InputError naming op when path is not a
// valid node path, or is the root ("/": the server's root, or in a
// namespace the namespace's node). A recipe keeps its nodes, or its data,
// in a node of its own; in the root they would mix with everything else
// there (ZooKeeper's own /zookeeper among it), and the recipe would take
// them for its own. recipe names the recipe in the message ("lock").
// Recipes check their paths with it before sending anything.
func CheckDir(op, path, recipe string) error {
	if err := client.CheckPath(op, path); err != nil {
		return err
	}
	if path == "/" {
		return &client.InputError{Op: op, Path: path, Reason: fmt.Sprintf("the %s needs a node of its own, not the root", recipe)}
	}
	return nil
}

// CheckName returns an *client.InputError naming op when parent is not a
// valid path, or name not a single node name under it: not empty, "." or
// "..", without "/". what is the name's role in the message ("member
// id", "service name").
func CheckName(op, parent, what, name string) error {
	if err := client.CheckPath(op, parent); err != nil {
		return err
	}
	var reason string
	switch {
	case name == "":
		reason = "empty " + what
	case strings.Contains(name, "/"):
		reason = fmt.Sprintf("%s %q contains /", what, name)
	default:
		if r := client.ValidatePath(client.JoinPath(parent, name), false); r != "" {
			reason = fmt.Sprintf("%s %q: %s", what, name, r)
		}
	}
	if reason != "" {
		return &client.InputError{Op: op, Path: parent, Reason: reason}
	}
	return nil
}

// CheckData returns an *client.InputError naming op when data is over c's
// limit on the data of the node path (Client.MaxData: the server's limit,
// the path counted inside c's namespace).
func CheckData(c *client.Client, op, path string, data []byte) error {
	if max := c.MaxData(path); len(data) > max {
		return &client.InputError{Op: op, Path: path, Reason: fmt.Sprintf("data of %d bytes is over the %d-byte limit", len(data), max)}
	}
	return nil
}

// CheckOwnNode returns an error matching ErrOtherRecipe when st, the Stat
// of the node path, shows that the node is not one a recipe of kind
// recipe keeps its persistent state in (a configuration's key, a simple
// barrier, a counter): it is ephemeral (a lock's, a member's, a
// rendezvous's node) or, unless children may be there, it has children
// (the directory of another recipe). Recipes check a node they found,
// and did not create, with it before they write to or delete it.
func CheckOwnNode(path string, st *client.Stat, recipe string, children bool) error {
	var what string
	switch {
	case st.EphemeralOwner != 0:
		what = fmt.Sprintf("an ephemeral node (session 0x%x)", st.EphemeralOwner)
	case !children && st.NumChildren > 0:
		what = fmt.Sprintf("a node with %d children", st.NumChildren)
	default:
		return nil
	}
	return OtherRecipef("zkit: %s is %s, not a %s's", path, what, recipe)
}

// CheckNotReadyDir returns an error matching ErrOtherRecipe when the node
// path has a persistent ReadyName child: it is a configuration's directory
// (or an open double barrier's), whose readers would take what a recipe of
// kind recipe adds there for a key, or refuse the path. An ephemeral child
// of that name is not one (a group's member may be called "ready"). A
// missing path is no error; transient errors are retried (client.Retry).
// A recipe calls it before it first writes under its path: a semaphore
// before it creates its locks or leases directory (at no cost while they
// are there), a group's member before it joins.
func CheckNotReadyDir(ctx context.Context, c *client.Client, path, recipe string) error {
	ready := client.JoinPath(path, ReadyName)
	var (
		found bool
		st    *client.Stat
	)
	err := c.Retry(ctx, func(ctx context.Context) (err error) {
		found, st, err = c.Exists(ctx, ready)
		return err
	})
	if err != nil {
		return err
	}
	if found && st.EphemeralOwner == 0 {
		return OtherRecipef("zkit: %s holds %s, a configuration's or a double barrier's node, not a %s's", path, ReadyName, recipe)
	}
	return nil
}

package recipes

import (
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

package recipes

import (
	"context"
	"errors"

	"github.com/zkit-dev/zkit/client"
)

// maxDirCreates bounds how often Join creates a queue's directory again
// because it went missing under the create of the participant's node.
// Each time takes a deletion in a window of a few milliseconds (the server
// reaping the emptied container, or someone deleting a parent), so more
// than one in a row means something keeps deleting it.
const maxDirCreates = 4

// CreateDir creates a recipe's missing directory dir. The directory
// itself is a container node, so that the server deletes it again once it
// is empty (ZooKeeper 3.5.3 and later; Curator creates its recipe
// directories the same way): the directories of locks or barriers no
// longer used, one per customer or per job, do not pile up. A server
// without containers (it answers Unimplemented, as ZooKeeper before 3.5
// does, and closes the connection) gets a persistent directory.
//
// Missing parents are created as persistent nodes (client.EnsurePath), not
// as containers as Curator does: they are the application's namespace,
// which other nodes may share, and a parent that vanished under someone's
// watch or plain create would surprise more than an empty one costs. The
// directory is created first; its parents are looked at only if one is
// missing.
//
// The directory and the missing parents get the ACL of opts: the ACL of
// the recipe's nodes.
//
// A directory that exists already is fine, whatever its kind. Lost
// connections, replies and sessions are ridden out (client.CreateDir):
// creating twice only answers NodeExists.
func CreateDir(ctx context.Context, c *client.Client, dir string, opts ...client.CreateOption) error {
	err := createContainer(ctx, c, dir, opts)
	if errors.Is(err, client.ErrNoNode) { // a parent is missing
		parent, _ := client.SplitPath(dir)
		if err := c.EnsurePath(ctx, parent, opts...); err != nil {
			return err
		}
		err = createContainer(ctx, c, dir, opts)
	}
	return err
}

// createContainer creates dir as a container, or as a persistent node on
// a server without containers.
func createContainer(ctx context.Context, c *client.Client, dir string, opts []client.CreateOption) error {
	err := c.CreateDir(ctx, dir, client.Container, opts...)
	if errors.Is(err, client.ErrUnimplemented) {
		err = c.CreateDir(ctx, dir, client.Persistent, opts...)
	}
	return err
}

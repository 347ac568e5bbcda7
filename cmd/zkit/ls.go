package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
)

func newLsCmd(a *app) *cobra.Command {
	var recursive bool
	cmd := &cobra.Command{
		Use:   "ls PATH [-R]",
		Short: "List a node's children",
		Long: `Lists the children of the node at PATH, one name a line, sorted. With -R it lists the
whole subtree instead: PATH and every node below it, one full path a line, parents
before their children.

A name that is not printable text is printed quoted as a Go string. With -o json it
prints {"path":PATH,"children":[NAME,...]}, and with -R one such object for every node
of the subtree.`,
		Example: `  zkit ls /
  zkit ls -R /services`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := nodePath(args[0]); err != nil {
				return err
			}
			return a.ls(cmd.Context(), args[0], recursive)
		},
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "R", false, "list the whole subtree")
	return cmd
}

// lsJSON is one node in ls's JSON output.
type lsJSON struct {
	Path     string   `json:"path"`
	Children []string `json:"children"`
}

func (a *app) ls(ctx context.Context, root string, recursive bool) error {
	return a.withReader(ctx, func(c *client.Client) error {
		return walk(ctx, c, root, recursive, func(p string, children []string) error {
			switch {
			case a.json():
				return a.writeJSON(lsJSON{p, children})
			case recursive:
				fmt.Fprintln(a.stdout, printable(p))
				return nil
			}
			for _, name := range children {
				fmt.Fprintln(a.stdout, printable(name))
			}
			return nil
		})
	})
}

// walk calls visit with root and its sorted children, and, if recursive,
// then with each child's subtree in turn, parents first. A node below root
// deleted meanwhile is skipped.
func walk(ctx context.Context, c *client.Client, root string, recursive bool, visit func(path string, children []string) error) error {
	var node func(p string) error
	node = func(p string) error {
		children, _, err := c.Children(ctx, p)
		switch {
		case errors.Is(err, client.ErrNoNode) && p != root:
			return nil // deleted since its parent was listed
		case err != nil:
			return nodeError("ls", p, err)
		}
		slices.Sort(children)
		if err := visit(p, children); err != nil || !recursive {
			return err
		}
		for _, name := range children {
			if err := node(client.JoinPath(p, name)); err != nil {
				return err
			}
		}
		return nil
	}
	return node(root)
}

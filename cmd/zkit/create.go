package main

import (
	"context"
	"path"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
)

func newCreateCmd(a *app) *cobra.Command {
	var parents bool
	var file string
	cmd := &cobra.Command{
		Use:   "create PATH [DATA|-|--file F] [--parents]",
		Short: "Create a persistent node",
		Long: `Creates the persistent node PATH holding DATA (default none; with - for DATA, what
standard input holds; with --file F, F's content: any byte, NUL included, up to the
most a node takes, as 'zkit set' says), with an ACL open to everyone, and prints its
path. The parent must exist; --parents creates the missing ones, empty. A node that
exists already is an error (status 1), left as it is.

Writing into the root or under /zookeeper is refused. With -o json it prints
{"path":PATH}.`,
		Example: `  zkit create /app
  zkit create /app/config/workers 8 --parents
  zkit create /app/cert --file cert.der`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.writablePath(args[0]); err != nil {
				return err
			}
			data, err := a.nodeData(args[0], args[1:], file)
			if err != nil {
				return err
			}
			return a.create(cmd.Context(), args[0], data, parents)
		},
	}
	cmd.Flags().BoolVar(&parents, "parents", false, "create the missing parents, empty")
	cmd.Flags().StringVar(&file, "file", "", "the data: this file's content (any bytes)")
	return cmd
}

// createJSON is create's JSON output.
type createJSON struct {
	Path string `json:"path"`
}

func (a *app) create(ctx context.Context, p string, data []byte, parents bool) error {
	return a.withClient(ctx, func(c *client.Client) error {
		if parent := path.Dir(p); parents && parent != "/" {
			if err := c.EnsurePath(ctx, parent); err != nil {
				return nodeError("create", parent, err)
			}
		}
		created, err := c.Create(ctx, p, data, client.Persistent)
		if err != nil {
			return nodeError("create", p, err)
		}
		return a.emit(printable(created), createJSON{created})
	})
}

package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
)

func newSetCmd(a *app) *cobra.Command {
	var version int32
	cmd := &cobra.Command{
		Use:   "set PATH DATA [--version N]",
		Short: "Replace a node's data",
		Long: `Replaces the data of the node at PATH with DATA. With --version N it writes only if
the node's dataVersion is N (see 'zkit stat'), and fails (status 1) writing nothing
if another write came first. Prints nothing.

Writing to the root or under /zookeeper is refused.`,
		Example: `  zkit set /app/config/workers 16
  zkit set /app/config/workers 16 --version 3`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.writableVersion(args[0], version); err != nil {
				return err
			}
			return a.set(cmd.Context(), args[0], []byte(args[1]), version)
		},
	}
	cmd.Flags().Int32Var(&version, "version", -1, "write only if the node's dataVersion is N (-1: any)")
	return cmd
}

func (a *app) set(ctx context.Context, path string, data []byte, version int32) error {
	return a.withClient(ctx, func(c *client.Client) error {
		if _, err := c.Set(ctx, path, data, version); err != nil {
			return nodeError("set", path, err)
		}
		return nil
	})
}

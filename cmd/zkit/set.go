package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
)

func newSetCmd(a *app) *cobra.Command {
	var version int32
	var file string
	cmd := &cobra.Command{
		Use:   "set PATH DATA|- [--version N] | set PATH --file F",
		Short: "Replace a node's data",
		Long: `Replaces the data of the node at PATH with DATA; with - for DATA, with what standard
input holds; with --file F, with F's content. Any byte goes, NUL included, up to the
most a node takes (ZooKeeper's jute.maxbuffer, 1 MiB less 1, less the request's own
bytes): more is refused (status 2) before anything is sent. With --version N it writes
only if the node's dataVersion is N (see 'zkit stat'), and fails (status 1) writing
nothing if another write came first. Prints nothing.

Writing to the root or under /zookeeper is refused.`,
		Example: `  zkit set /app/config/workers 16
  zkit set /app/config/workers 16 --version 3
  zkit set /app/cert --file cert.der
  gzip -c state.json | zkit set /app/state -`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.writableVersion(args[0], version); err != nil {
				return err
			}
			if len(args) == 1 && file == "" {
				return usagef("missing DATA: give it, - for standard input, or --file F")
			}
			data, err := a.nodeData(args[0], args[1:], file)
			if err != nil {
				return err
			}
			return a.set(cmd.Context(), args[0], data, version)
		},
	}
	cmd.Flags().Int32Var(&version, "version", -1, "write only if the node's dataVersion is N (-1: any)")
	cmd.Flags().StringVar(&file, "file", "", "write this file's content (any bytes)")
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

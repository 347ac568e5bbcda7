package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
)

func newStatCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "stat PATH",
		Short: "Print a node's Stat: versions, zxids, times, owner",
		Long: `Prints the Stat of the node at PATH as zkCli does, one "name = value" line each
(cZxid, ctime, mZxid, mtime, pZxid, cversion, dataVersion, aclVersion,
ephemeralOwner, dataLength, numChildren), with zxids and the owner's session in hex
and times in UTC.

With -o json it prints {"path":PATH,"stat":{...}} with the same names, numbers in
decimal and times in milliseconds since the epoch.`,
		Example: `  zkit stat /app/config
  zkit stat /app/config -o json | jq .stat.dataVersion`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := nodePath(args[0]); err != nil {
				return err
			}
			return a.stat(cmd.Context(), args[0])
		},
	}
}

// statOutJSON is stat's JSON output.
type statOutJSON struct {
	Path string   `json:"path"`
	Stat statJSON `json:"stat"`
}

func (a *app) stat(ctx context.Context, path string) error {
	return a.withReader(ctx, func(c *client.Client) error {
		ok, st, err := c.Exists(ctx, path)
		switch {
		case err == nil && !ok:
			return failf("stat %s: no such node", path)
		case err != nil:
			return nodeError("stat", path, err)
		case a.json():
			return a.writeJSON(statOutJSON{path, newStatJSON(st)})
		}
		writeStat(a.stdout, st)
		return nil
	})
}

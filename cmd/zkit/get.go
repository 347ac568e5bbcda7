package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
)

func newGetCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "get PATH",
		Short: "Print a node's data",
		Long: `Prints the data of the node at PATH on one line: as it is when it is printable text,
else quoted as a Go string ("a\tb\n", "\xff"), so that tabs, newlines and binary
bytes are visible and one node is always one line.

With -o json it prints {"path":PATH,"data":TEXT,"stat":{...}}, with "data_base64"
instead of "data" when the data is not UTF-8, and the Stat as 'zkit stat' prints it.`,
		Example: `  zkit get /app/config/workers
  zkit get /app/leader -o json | jq -r .data`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := nodePath(args[0]); err != nil {
				return err
			}
			return a.get(cmd.Context(), args[0])
		},
	}
}

// getJSON is get's JSON output.
type getJSON struct {
	Path string `json:"path"`
	dataJSON
	Stat statJSON `json:"stat"`
}

func (a *app) get(ctx context.Context, path string) error {
	return a.withReader(ctx, func(c *client.Client) error {
		data, st, err := c.Get(ctx, path)
		if err != nil {
			return nodeError("get", path, err)
		}
		return a.emit(printable(string(data)), getJSON{path, newDataJSON(data), newStatJSON(st)})
	})
}

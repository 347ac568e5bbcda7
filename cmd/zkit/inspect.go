package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/inspect"
)

func newInspectCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "inspect PATH",
		Short: "Show what recipe lives at PATH: who holds it, who waits, since when",
		Long: `Reads PATH and its children, tells the recipe from its node layout, and prints
what it holds: nothing is written.

  lock, rwlock  the holder(s) and the waiters in queue order
  semaphore     the leases held, and the attempts queued at its lock
  election      the leader and the candidates in order, with their ids
  barrier       a double barrier's members, and whether ready exists
  counter       the value in every encoding the data fits (long, int, text), and
                the writers waiting their turn, first in line first
  group         the members and their payloads
  rendezvous    the owner and the address in it
  config        the keys and their values, and whether ready exists
  discovery     the instances of a service, or of every service of a base

Each node shows its session (ephemeralOwner, hex; "-" for a persistent node), its
fencing token (czxid × 256 for a lock, semaphore or election node: its
first holder's token) and its age (from its ctime: how long it has held or waited).
Nodes of kazoo's recipes (whose layouts differ) are recognised and marked kazoo;
Curator's share zkit's layout and are marked curator where their data tells (the
host address Curator writes into lock and semaphore nodes). A path of no recipe's
layout is listed with its children's stats. Data is printed escaped, as a Go string;
with -o json the report is one JSON object, each data as "data", or as
"data_base64" when it is not UTF-8 (as 'zkit get' prints it).`,
		Example: `  zkit inspect /app/locks/report
  zkit inspect /services -o json | jq '.nodes[] | select(.role == "instance") | .id'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			before, _, err := positional(cmd, args, 1, "PATH")
			if err != nil {
				return err
			}
			if reason := client.ValidatePath(before[0], false); reason != "" {
				return usagef("invalid PATH %q: %s", before[0], reason)
			}
			return a.inspect(cmd.Context(), before[0])
		},
	}
}

func (a *app) inspect(ctx context.Context, path string) error {
	c, err := a.connectToRead(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	r, err := inspect.Inspect(ctx, c, path)
	switch {
	case errors.Is(err, client.ErrNoNode):
		return failf("%s: no such node", path)
	case err != nil:
		return failf("%v", err) // it names the path
	case a.json():
		err = json.NewEncoder(a.stdout).Encode(r)
	default:
		err = r.WriteText(a.stdout)
	}
	if err != nil {
		return failf("%s: %v", path, err)
	}
	return nil
}

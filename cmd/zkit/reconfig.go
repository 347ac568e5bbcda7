package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
)

func newEnsembleReconfigCmd(a *app) *cobra.Command {
	var add, remove, members []string
	var fromVersion string
	cmd := &cobra.Command{
		Use:   "reconfig --add SERVER,... | --remove ID,... | --members SERVER,... [--from-version V]",
		Short: "Change the ensemble's membership (dynamic reconfiguration, ZooKeeper 3.5+)",
		Long: `Changes the ensemble's membership as zkCli's reconfig does, and prints the new
configuration: one server a line, then version=V (with -o json: {"servers":[..],
"version":"V"}).

  --add SERVER,...      add servers, or change those already members (their ports, or
                        their role: participant or observer)
  --remove ID,...       remove the servers of these ids
  --members SERVER,...  replace the whole membership (not with --add or --remove)
  --from-version V      only if the configuration is at version V (hexadecimal, as
                        'zkit get /zookeeper/config' shows it on its last line)

A SERVER is a line of ZooKeeper's dynamic configuration,
server.ID=HOST:QUORUM_PORT:ELECTION_PORT[:ROLE];[CLIENT_HOST:]CLIENT_PORT ("ID=..."
too). Each flag takes a comma-separated list and may be repeated.

The servers must run with reconfigEnabled=true, and ZooKeeper lets only a super user
reconfigure (the servers' zookeeper.DigestAuthenticationProvider.superDigest: pass
--auth digest:super:PASSWORD, or --auth-file), or credentials with write access to
/zookeeper/config (a super user grants it with setacl), unless the servers run with
skipACL=yes. A server to add must already run, started with the current configuration
plus itself (as an observer: ZooKeeper's administrator guide, "adding servers"), so
that it has synced with the leader: the leader takes a new configuration only when a
quorum of it is connected and up to date. A removed server is not stopped: it serves
on as a non-voting follower until it is shut down, and clients that follow
/zookeeper/config (Curator's EnsembleTracker, zkit's client.WithEnsembleTracker) move
off it.`,
		Example: `  zkit ensemble reconfig --auth-file super.auth --add 'server.4=zk4:2888:3888:participant;2181'
  zkit ensemble reconfig --auth-file super.auth --remove 4,5
  zkit ensemble reconfig --auth-file super.auth --members "$(paste -sd, members.cfg)"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			change := client.ConfigChange{Add: splitList(add), Remove: splitList(remove), Members: splitList(members)}
			if fromVersion != "" {
				v, err := strconv.ParseInt(strings.TrimPrefix(fromVersion, "0x"), 16, 64)
				if err != nil || v <= 0 {
					return usagef("--from-version %q: want the configuration's version, hexadecimal", fromVersion)
				}
				change.FromVersion = v
			}
			if len(change.Add)+len(change.Remove)+len(change.Members) == 0 {
				return usagef("give --add, --remove or --members")
			}
			if err := change.Validate(); err != nil {
				return reconfigError(err, true)
			}
			return a.reconfig(cmd.Context(), change)
		},
	}
	cmd.Flags().StringArrayVar(&add, "add", nil, "servers to add, `SERVER,...` (server.ID=HOST:PORT:PORT[:ROLE];[HOST:]PORT)")
	cmd.Flags().StringArrayVar(&remove, "remove", nil, "the ids of servers to remove, `ID,...`")
	cmd.Flags().StringArrayVar(&members, "members", nil, "the whole new membership, `SERVER,...`")
	cmd.Flags().StringVar(&fromVersion, "from-version", "", "change only the configuration of this version (hexadecimal)")
	return cmd
}

// splitList splits comma-separated lists, as zkCli's reconfig takes them.
func splitList(flags []string) []string {
	var out []string
	for _, f := range flags {
		for _, s := range strings.Split(f, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// configJSON is reconfig's JSON output.
type configJSON struct {
	Servers []string `json:"servers"`
	Version string   `json:"version,omitempty"`
}

func (a *app) reconfig(ctx context.Context, change client.ConfigChange) error {
	c, err := a.connectToWait(ctx) // creates nothing: a chroot means nothing to a reconfiguration
	if err != nil {
		return err
	}
	defer c.Close()
	cfg, _, err := c.Reconfig(ctx, change)
	if err != nil {
		return reconfigError(err, a.creds != nil)
	}
	var out configJSON
	for _, line := range strings.Split(strings.TrimSpace(string(cfg)), "\n") {
		if v, ok := strings.CutPrefix(line, "version="); ok {
			out.Version = v
		} else if line != "" {
			out.Servers = append(out.Servers, line)
		}
	}
	if a.json() {
		return a.writeJSON(out)
	}
	_, err = fmt.Fprintf(a.stdout, "%s\n", strings.TrimSpace(string(cfg)))
	return err
}

// reconfigError is zkit's one line for a refused reconfiguration, with
// its fix.
func reconfigError(err error, withCreds bool) error {
	var ie *client.InputError
	switch {
	case errors.As(err, &ie):
		return usagef("%s", oneLine(err))
	case errors.Is(err, client.ErrNoAuth) && !withCreds:
		return failf("not allowed: only a super user, or credentials with write access to /zookeeper/config, may reconfigure; pass them with --auth or --auth-file")
	case errors.Is(err, client.ErrNoAuth):
		return failf("not allowed: these credentials are neither the servers' super user nor allowed to write /zookeeper/config")
	case errors.Is(err, client.ErrReconfigDisabled):
		return failf("the servers run without reconfigEnabled=true: their membership cannot change")
	case errors.Is(err, client.ErrUnimplemented):
		return failf("a standalone server cannot change its membership (standaloneEnabled=true, or not ZooKeeper 3.5+)")
	case errors.Is(err, client.ErrNewConfigNoQuorum):
		return failf("no quorum of the new configuration is connected and up to date with the leader: start the servers to add first, with the current configuration plus themselves, and wait until they have synced")
	case errors.Is(err, client.ErrReconfigInProgress):
		return failf("another reconfiguration is in progress; try again once it is committed")
	case errors.Is(err, client.ErrBadVersion):
		return failf("the configuration is not at --from-version's version: it changed meanwhile; nothing changed")
	case errors.Is(err, client.ErrBadArguments):
		return failf("the servers refused the change as invalid (a malformed server line, an unknown id, or fewer than two participants with standaloneEnabled=true): %v", err)
	case client.IsOutcomeUnknown(err):
		return failf("the reply was lost and zkit cannot tell whether the reconfiguration was applied (%v); read /zookeeper/config before trying again", err)
	}
	return failf("%v", err)
}

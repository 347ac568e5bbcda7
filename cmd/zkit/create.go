package main

import (
	"context"
	"errors"
	"path"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
)

// createFlags are create's modes, as zkCli's create has them.
type createFlags struct {
	parents    bool
	file       string
	ephemeral  bool
	sequential bool
	container  bool
	ttl        time.Duration
}

func newCreateCmd(a *app) *cobra.Command {
	var f createFlags
	cmd := &cobra.Command{
		Use:   "create PATH [DATA|-|--file F] [-e] [-s] [--ttl D|--container] [--parents]",
		Short: "Create a node: persistent, ephemeral, sequential, TTL or container",
		Long: `Creates the node PATH holding DATA (default none; with - for DATA, what standard
input holds; with --file F, F's content: any byte, NUL included, up to the most a node
takes, as 'zkit set' says), with an ACL open to everyone, and prints its path. The
parent must exist; --parents creates the missing ones, empty. A node that exists
already is an error (status 1), left as it is. With -o json it prints {"path":PATH}.

The node is persistent unless a flag says otherwise, as with zkCli's create:

  -s, --sequential  the server appends a sequence number to PATH (which may end
                    with /): the path printed is the one created
  -e, --ephemeral   the node lives as long as zkit's session: zkit prints its path
                    and keeps it until SIGINT or SIGTERM (then exits 0, and the node
                    goes with the session); if the node is deleted or the session
                    lost meanwhile, it exits with status 5
  --ttl D           a persistent node the servers delete once it has had no child
                    and no change for D (with -s, sequential too). ZooKeeper takes
                    TTL nodes only with zookeeper.extendedTypesEnabled=true
  --container       a container: the servers delete it once its last child is gone

Writing into the root or under /zookeeper is refused.`,
		Example: `  zkit create /app
  zkit create /app/config/workers 8 --parents
  zkit create /app/cert --file cert.der
  zkit create /app/jobs/job- -s
  zkit create /app/alive/$(hostname) -e &
  zkit create /app/uploads/batch --ttl 1h`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			mode, err := f.mode()
			if err != nil {
				return err
			}
			if err := a.writableNode(args[0], mode.Sequential()); err != nil {
				return err
			}
			data, err := a.nodeData(args[0], args[1:], f.file)
			if err != nil {
				return err
			}
			return a.create(cmd.Context(), args[0], data, mode, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.parents, "parents", false, "create the missing parents, empty")
	fl.StringVar(&f.file, "file", "", "the data: this file's content (any bytes)")
	fl.BoolVarP(&f.ephemeral, "ephemeral", "e", false, "an ephemeral node, kept until zkit is stopped")
	fl.BoolVarP(&f.sequential, "sequential", "s", false, "a sequential node: the server appends a sequence number")
	fl.BoolVarP(&f.container, "container", "c", false, "a container node")
	fl.DurationVar(&f.ttl, "ttl", 0, "a TTL node, deleted once unchanged and childless for D")
	return cmd
}

// mode is the create mode the flags ask for.
func (f createFlags) mode() (client.CreateMode, error) {
	ttl := f.ttl != 0
	switch {
	case f.container && (f.ephemeral || f.sequential || ttl):
		return 0, usagef("--container goes alone: a container is neither ephemeral, sequential nor TTL")
	case f.ephemeral && ttl:
		return 0, usagef("--ttl and -e exclude each other: an ephemeral node goes with its session")
	case ttl && (f.ttl < time.Millisecond || f.ttl > client.MaxTTL):
		return 0, usagef("--ttl %v: want 1ms to %v", f.ttl, client.MaxTTL)
	case f.container:
		return client.Container, nil
	case ttl && f.sequential:
		return client.PersistentSequentialTTL, nil
	case ttl:
		return client.PersistentTTL, nil
	case f.ephemeral && f.sequential:
		return client.EphemeralSequential, nil
	case f.ephemeral:
		return client.Ephemeral, nil
	case f.sequential:
		return client.PersistentSequential, nil
	}
	return client.Persistent, nil
}

// createJSON is create's JSON output.
type createJSON struct {
	Path string `json:"path"`
}

func (a *app) create(ctx context.Context, p string, data []byte, mode client.CreateMode, f createFlags) error {
	return a.withClient(ctx, func(c *client.Client) error {
		if parent := path.Dir(p); f.parents && parent != "/" {
			if err := c.EnsurePath(ctx, parent); err != nil {
				return nodeError("create", parent, err)
			}
		}
		var opts []client.CreateOption
		if f.ttl != 0 {
			opts = append(opts, client.WithTTL(f.ttl))
		}
		created, err := c.Create(ctx, p, data, mode, opts...)
		switch {
		case errors.Is(err, client.ErrUnimplemented) && f.ttl != 0:
			return failf("create %s: the servers do not take TTL nodes: ZooKeeper needs zookeeper.extendedTypesEnabled=true", p)
		case err != nil:
			return nodeError("create", p, err)
		case !mode.IsEphemeral():
			return a.emit(printable(created), createJSON{created})
		}
		if lost := a.hold(ctx, watchNode(ctx, c, created), printable(created), createJSON{created}); lost != nil {
			return lostf("ephemeral node %s gone: %s", created, cause(created, lost))
		}
		return nil
	})
}

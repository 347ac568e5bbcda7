package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/semaphore"
)

type semaphoreFlags struct {
	id        string
	max       int
	try       bool
	wait      time.Duration
	tolerance time.Duration
}

func newSemaphoreCmd(a *app) *cobra.Command {
	var f semaphoreFlags
	cmd := &cobra.Command{
		Use:   "semaphore PATH --max N [--id ID] [--try] [--wait D] [--tolerance D] -- CMD [ARGS]",
		Short: "Hold one of N leases while CMD runs; exit with CMD's status",
		Long: `Holds one lease of the counting semaphore at PATH, which at most N holders hold at
once, while CMD runs, and exits with CMD's status. Every process using PATH must give
the same --max.

CMD gets ZKIT_SEMAPHORE_NODE (the lease node), ZKIT_SEMAPHORE_MAX (N) and
ZKIT_FENCING_TOKEN (the lease node's czxid × 256). If the lease is lost while CMD runs
(session expired, connection lost for longer than --tolerance, node deleted), CMD gets
SIGTERM and zkit exits with status 5.

--id ID says who holds the lease (default HOSTNAME-PID): it is written in the lease
node, where 'zkit inspect' and 'zkit top' show it, as Curator writes its host's address.

--tolerance D keeps the lease, and CMD, across a connection lost for up to D (a
ZooKeeper restart, a network blip); the default, 0, ends CMD as soon as the
connection is lost. Meanwhile the session may expire at the servers and another
process take the lease: N+1 holders' CMDs may run at once for up to D, so fence what
they write.

The semaphore is Curator's InterProcessSemaphoreV2 layout: Java and Go processes share
the N leases of the same PATH.`,
		Example: `  zkit semaphore /semaphores/export --max 4 -- ./export.sh
  zkit semaphore /semaphores/export --max 4 --wait 30s -- ./export.sh
  zkit semaphore /semaphores/export --max 4 --try -- ./export.sh`,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, argv, err := semaphoreArgs(cmd, args, f)
			if err != nil {
				return err
			}
			if f.id, err = holderID(cmd, f.id); err != nil {
				return err
			}
			return a.runSemaphore(cmd.Context(), path, argv, f)
		},
	}
	fl := cmd.Flags()
	idFlag(fl, &f.id, "who holds the lease, written in its node (inspect and top show it)")
	fl.IntVar(&f.max, "max", 0, "the number of leases: at most N holders at once (required)")
	fl.BoolVar(&f.try, "try", false, "fail at once (status 4) if no lease is free")
	waitFlag(fl, &f.wait, "give up (status 4) if no lease is held within D")
	fl.DurationVar(&f.tolerance, "tolerance", 0, "keep the lease across a connection lost for up to D")
	return cmd
}

func semaphoreArgs(cmd *cobra.Command, args []string, f semaphoreFlags) (path string, argv []string, err error) {
	before, argv, err := positional(cmd, args, 1, "PATH (zkit semaphore PATH --max N -- CMD [ARGS])")
	if err != nil {
		return "", nil, err
	}
	path = before[0]
	switch {
	case len(argv) == 0:
		return "", nil, usagef("missing CMD (zkit semaphore PATH --max N -- CMD [ARGS])")
	case !cmd.Flags().Changed("max"):
		return "", nil, usagef("missing --max N: the number of leases, the same for every process on %s", path)
	case f.max < 1:
		return "", nil, usagef("--max %d: must be at least 1", f.max)
	case f.try && f.wait != 0:
		return "", nil, usagef("--try and --wait exclude each other")
	case f.tolerance < 0:
		return "", nil, usagef("--tolerance %v: must not be negative", f.tolerance)
	}
	if err := recipePath(path, "semaphore"); err != nil {
		return "", nil, err
	}
	return path, argv, nil
}

// runSemaphore takes a lease, runs CMD while holding it and releases it.
func (a *app) runSemaphore(ctx context.Context, path string, argv []string, f semaphoreFlags) error {
	acquireCtx, cancel := withWait(ctx, f.wait)
	defer cancel()
	c, err := a.connect(acquireCtx)
	if err != nil {
		return err
	}
	defer c.Close()

	sem := semaphore.New(c, path, f.max, semaphore.WithSuspendTolerance(f.tolerance), semaphore.WithData([]byte(f.id)))
	var lease *semaphore.Lease
	if f.try {
		lease, err = sem.TryAcquire(acquireCtx)
	} else {
		stop := a.sayWaiting(acquireCtx, "semaphore", countIn(c, path+"/leases", nil, func(n int) string {
			return fmt.Sprintf("waiting for one of the %d leases of %s: %d held", f.max, path, n)
		}))
		lease, err = sem.Acquire(acquireCtx)
		stop()
	}
	switch {
	case errors.Is(err, recipes.ErrWouldBlock):
		return timeoutf("%s: all %d leases are held (--try)", path, f.max)
	case err != nil && acquireCtx.Err() != nil && ctx.Err() == nil:
		return timeoutf("%s: no lease within %v", path, f.wait)
	case err != nil:
		return failf("%s", about(path, path, err))
	}
	status, lost, err := a.runWhileHeld(ctx, lease, argv,
		"ZKIT_SEMAPHORE_NODE="+lease.Node(),
		"ZKIT_SEMAPHORE_MAX="+strconv.Itoa(f.max),
		"ZKIT_FENCING_TOKEN="+strconv.FormatInt(lease.Token(), 10))
	if uerr := release(lease); uerr != nil && lost == nil && errors.Is(uerr, recipes.ErrLost) {
		lost = uerr // lost just as CMD ended
	}
	switch {
	case err != nil:
		return err
	case lost != nil && !errors.Is(lost, errStopped):
		return lostf("semaphore lease on %s lost while %s ran: %s", path, argv[0], cause(path, lost))
	}
	return cmdStatus(status)
}

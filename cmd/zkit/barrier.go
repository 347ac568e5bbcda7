package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/barrier"
)

type barrierFlags struct {
	count int
	wait  time.Duration
}

func newBarrierCmd(a *app) *cobra.Command {
	var f barrierFlags
	cmd := &cobra.Command{
		Use:   "barrier PATH --count N [--wait D] -- CMD [ARGS]",
		Short: "Start CMD together with N-1 others, and leave together; exit with CMD's status",
		Long: `A double barrier: waits until N members (this one included) have entered the barrier
at PATH, runs CMD, then waits until all N have left, and exits with CMD's status.
Every member runs the same command line with the same N, on its own machine or
shell.

CMD gets ZKIT_BARRIER_NODE (this member's node) and ZKIT_BARRIER_COUNT. If this
member's session is lost while CMD runs, CMD gets SIGTERM and zkit exits with status
5; the others then see a member lost. If another member vanished instead of leaving
(its session expired, it crashed), zkit still waits for every node to go, then exits
with status 5 (unless CMD failed: then with CMD's status).

The barrier is Curator's DistributedDoubleBarrier layout: Java members can join.
One PATH serves rounds one after the other: a member arriving while a round is past
its threshold waits for the next.`,
		Example: `  zkit barrier /jobs/phase1 --count 4 -- ./compute-shard.sh
  zkit barrier /jobs/phase1 --count 4 --wait 5m -- ./compute-shard.sh`,
		RunE: func(cmd *cobra.Command, args []string) error {
			before, argv, err := positional(cmd, args, 1, "PATH (zkit barrier PATH --count N -- CMD [ARGS])")
			if err != nil {
				return err
			}
			path := before[0]
			switch {
			case len(argv) == 0:
				return usagef("missing CMD (zkit barrier PATH --count N -- CMD [ARGS])")
			case !cmd.Flags().Changed("count"):
				return usagef("missing --count N: how many members the barrier waits for")
			case f.count < 1:
				return usagef("--count %d: must be at least 1", f.count)
			}
			if err := recipePath(path, "barrier"); err != nil {
				return err
			}
			return a.runBarrier(cmd.Context(), path, argv, f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.count, "count", 0, "how many members enter and leave together (required)")
	waitFlag(fl, &f.wait, "give up (status 4) if the barrier does not open, or the others do not all leave, within D")
	return cmd
}

// runBarrier enters, runs CMD while inside, and leaves.
func (a *app) runBarrier(ctx context.Context, path string, argv []string, f barrierFlags) error {
	// --wait bounds the way in from the start: connecting counts.
	enterCtx, cancel := withWait(ctx, f.wait)
	defer cancel()
	c, err := a.connect(enterCtx)
	if err != nil {
		return err
	}
	defer c.Close()
	d := barrier.NewDouble(c, path, f.count)

	// The barrier's ready flag is a child of PATH too, not a member.
	stop := a.sayWaiting(enterCtx, "barrier", countIn(c, path, []string{"ready"}, func(n int) string {
		return fmt.Sprintf("waiting at barrier %s: %d of %d members in", path, n, f.count)
	}))
	err = d.Enter(enterCtx)
	stop()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return timeoutf("barrier %s did not open within %v: fewer than %d members arrived", path, f.wait, f.count)
		}
		return failf("%s", about("barrier "+path, path, err))
	}
	sess := c.Session()
	status, lost, err := a.runWhileHeld(ctx, sess, argv,
		"ZKIT_BARRIER_NODE="+d.Node(),
		"ZKIT_BARRIER_COUNT="+strconv.Itoa(f.count))
	switch {
	case err != nil:
		return err
	case errors.Is(lost, errStopped):
		// Interrupted: CMD did not finish, so this member does not leave;
		// closing the client removes its node, and the others see it lost.
		return cmdStatus(status)
	case lost != nil:
		return lostf("barrier %s: this member's session was lost while %s ran: %s", path, argv[0], cause(path, lost))
	}
	err = bounded(ctx, f.wait, d.Leave)
	switch {
	case err == nil:
		return cmdStatus(status)
	case status != 0 || ctx.Err() != nil:
		// CMD failed, or zkit was stopped once CMD ran: CMD's status.
		return cmdStatus(status)
	case errors.Is(err, barrier.ErrMemberLost):
		return lostf("%s; the others' work may be incomplete", about("barrier "+path, path, err))
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return timeoutf("barrier %s: the other members did not all leave within %v", path, f.wait)
	}
	return failf("%s", about("barrier "+path+": leave", path, err))
}

// bounded runs f with a deadline of d from now (none if d is 0).
func bounded(ctx context.Context, d time.Duration, f func(context.Context) error) error {
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return f(ctx)
}

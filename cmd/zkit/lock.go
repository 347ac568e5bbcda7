package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/rwlock"
)

type lockFlags struct {
	id          string
	read, write bool
	try         bool
	wait        time.Duration
	tolerance   time.Duration
}

func newLockCmd(a *app) *cobra.Command {
	var f lockFlags
	cmd := &cobra.Command{
		Use:   "lock PATH [--id ID] [--read|--write] [--try] [--wait D] [--tolerance D] [-- CMD [ARGS]]",
		Short: "Hold a lock while CMD runs, or until interrupted",
		Long: `Holds the lock at PATH while CMD runs, and exits with CMD's status.

Without CMD it holds the lock until SIGINT or SIGTERM (then releases it and exits 0),
printing "NODE TOKEN" once it holds it (-o json: {"node":NODE,"token":TOKEN}); if the
lock is lost meanwhile it exits with status 5.

CMD gets ZKIT_LOCK_NODE (the lock node) and ZKIT_FENCING_TOKEN (its czxid × 256, which
only grows from one holder to the next: pass it to what CMD writes to, so that a stale
holder's writes can be refused). If the lock is lost while CMD runs (session expired,
connection lost for longer than --tolerance, node deleted), CMD gets SIGTERM and zkit
exits with status 5.

--id ID says who holds it (default HOSTNAME-PID): it is written in the lock node, where
'zkit inspect' and 'zkit top' show it, as Curator writes its host's address.

--tolerance D keeps the lock, and CMD, across a connection lost for up to D (a
ZooKeeper restart, a network blip); the default, 0, ends CMD as soon as the
connection is lost. Meanwhile the session may expire at the servers and another
process take the lock: CMD may run beside it for up to D, so fence what it writes.

The lock is Curator's InterProcessMutex layout (or InterProcessReadWriteLock with
--read/--write): Java and Go processes exclude each other on the same PATH.`,
		Example: `  zkit lock /locks/nightly -- ./backup.sh
  zkit lock /locks/nightly --wait 30s -- ./backup.sh
  zkit lock /locks/schema --read -- ./migrate --check
  zkit lock /locks/maintenance     # hold it from a terminal; ^C releases`,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, argv, err := lockArgs(cmd, args, f)
			if err != nil {
				return err
			}
			if f.id, err = holderID(cmd, f.id); err != nil {
				return err
			}
			return a.runLock(cmd.Context(), path, argv, f)
		},
	}
	fl := cmd.Flags()
	idFlag(fl, &f.id, "who holds it, written in the lock node (inspect and top show it)")
	fl.BoolVar(&f.read, "read", false, "take the read side of a read/write lock")
	fl.BoolVar(&f.write, "write", false, "take the write side of a read/write lock")
	fl.BoolVar(&f.try, "try", false, "fail at once (status 4) if the lock is taken")
	waitFlag(fl, &f.wait, "give up (status 4) if the lock is not held within D")
	fl.DurationVar(&f.tolerance, "tolerance", 0, "keep the lock across a connection lost for up to D")
	return cmd
}

func lockArgs(cmd *cobra.Command, args []string, f lockFlags) (path string, argv []string, err error) {
	before, argv, err := positional(cmd, args, 1, "PATH (zkit lock PATH -- CMD [ARGS])")
	if err != nil {
		return "", nil, err
	}
	path = before[0]
	switch {
	case argv != nil && len(argv) == 0:
		return "", nil, usagef("missing CMD after -- (zkit lock PATH -- CMD [ARGS])")
	case f.read && f.write:
		return "", nil, usagef("--read and --write exclude each other")
	case f.try && f.wait != 0:
		return "", nil, usagef("--try and --wait exclude each other")
	case f.tolerance < 0:
		return "", nil, usagef("--tolerance %v: must not be negative", f.tolerance)
	}
	if err := recipePath(path, "lock"); err != nil {
		return "", nil, err
	}
	return path, argv, nil
}

// runLock takes the lock, runs CMD while holding it and releases it.
func (a *app) runLock(ctx context.Context, path string, argv []string, f lockFlags) error {
	acquireCtx, cancel := withWait(ctx, f.wait)
	defer cancel()
	c, err := a.connect(acquireCtx)
	if err != nil {
		return err
	}
	defer c.Close()

	kinds := []recipes.Kind{recipes.MutexKind}
	if f.read || f.write {
		kinds = []recipes.Kind{recipes.ReadKind, recipes.WriteKind}
	}
	stop := a.sayWaiting(acquireCtx, "lock", queuePlace(c, path, path, kinds...))
	lease, err := acquireLock(acquireCtx, c, path, f)
	stop()
	switch {
	case errors.Is(err, recipes.ErrWouldBlock):
		return timeoutf("%s is held by another (--try)", path)
	case err != nil && acquireCtx.Err() != nil && ctx.Err() == nil:
		return timeoutf("%s not acquired within %v", path, f.wait)
	case err != nil:
		return failf("%s", about(path, path, err))
	}
	if len(argv) == 0 {
		lost := a.hold(ctx, lease, fmt.Sprintf("%s %d", printable(lease.Node()), lease.Token()), heldJSON{Node: lease.Node(), Token: lease.Token()})
		if uerr := release(lease); uerr != nil && lost == nil && errors.Is(uerr, recipes.ErrLost) {
			lost = uerr // lost just as zkit was stopped
		}
		if lost != nil {
			return lostf("lock %s lost: %s", path, cause(path, lost))
		}
		return nil
	}
	status, lost, err := a.runWhileHeld(ctx, lease, argv,
		"ZKIT_LOCK_NODE="+lease.Node(),
		"ZKIT_FENCING_TOKEN="+strconv.FormatInt(lease.Token(), 10))
	if uerr := release(lease); uerr != nil && lost == nil && errors.Is(uerr, recipes.ErrLost) {
		lost = uerr // lost just as CMD ended
	}
	switch {
	case err != nil:
		return err
	case lost != nil && !errors.Is(lost, errStopped):
		return lostf("lock %s lost while %s ran: %s", path, argv[0], cause(path, lost))
	}
	return cmdStatus(status)
}

func acquireLock(ctx context.Context, c *client.Client, path string, f lockFlags) (*recipes.Lease, error) {
	if f.read || f.write {
		rw := rwlock.New(c, path, rwlock.WithSuspendTolerance(f.tolerance), rwlock.WithData([]byte(f.id)))
		switch {
		case f.read && f.try:
			return rw.TryRLock(ctx)
		case f.read:
			return rw.RLock(ctx)
		case f.try:
			return rw.TryLock(ctx)
		}
		return rw.Lock(ctx)
	}
	l := lock.New(c, path, lock.WithSuspendTolerance(f.tolerance), lock.WithData([]byte(f.id)))
	if f.try {
		return l.TryLock(ctx)
	}
	return l.Lock(ctx)
}

// release ends a lease, waiting a bounded time for the delete.
func release(lease *recipes.Lease) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return lease.Unlock(ctx)
}

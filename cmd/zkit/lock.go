package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/rwlock"
)

const lockUsage = `usage: zkit lock PATH [--read|--write] [--try] [--wait DURATION]
                 [--servers host:port,...] [--session-timeout D] -- CMD [ARGS]

Holds the lock at PATH while CMD runs, and exits with CMD's status. CMD gets
ZKIT_LOCK_NODE (the lock node) and ZKIT_FENCING_TOKEN (its czxid). If the lock
is lost while CMD runs, CMD gets SIGTERM and zkit exits non-zero.

  --read, --write   take the read or the write side of a read/write lock
                    (default: an exclusive lock)
  --try             fail at once if the lock is held
  --wait D          give up if the lock is not held within D
  --servers         default $ZKIT_SERVERS, else 127.0.0.1:2181
`

// killGrace is how long CMD has to exit after SIGTERM before it is killed.
const killGrace = 10 * time.Second

// lockCmd is "zkit lock": it exits with CMD's status itself.
func lockCmd(args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	status, err := runLock(ctx, args, os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		return err
	}
	if status != 0 {
		os.Exit(status)
	}
	return nil
}

type lockArgs struct {
	path           string
	cmd            []string
	read, write    bool
	try            bool
	wait           time.Duration
	servers        []string
	sessionTimeout time.Duration
}

func parseLockArgs(args []string, stderr io.Writer) (lockArgs, error) {
	var a lockArgs
	fs := flag.NewFlagSet("zkit lock", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&a.read, "read", false, "")
	fs.BoolVar(&a.write, "write", false, "")
	fs.BoolVar(&a.try, "try", false, "")
	fs.DurationVar(&a.wait, "wait", 0, "")
	servers := fs.String("servers", globalServers, "")
	fs.DurationVar(&a.sessionTimeout, "session-timeout", globalSessionTimeout, "")

	rest := args
	if i := indexOf(args, "--"); i >= 0 {
		rest, a.cmd = args[:i], args[i+1:]
	}
	// Flags may come before and after PATH.
	var positional []string
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stderr, lockUsage)
				return a, errUsage
			}
			return a, err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if indexOf(args, "--") < 0 && len(positional) > 1 {
		positional, a.cmd = positional[:1], positional[1:]
	}
	switch {
	case len(positional) == 0:
		return a, errors.New("missing PATH (zkit lock PATH -- CMD [ARGS])")
	case len(positional) > 1:
		return a, fmt.Errorf("unexpected argument %q before --", positional[1])
	case len(a.cmd) == 0:
		return a, errors.New("missing CMD (zkit lock PATH -- CMD [ARGS])")
	case a.read && a.write:
		return a, errors.New("--read and --write exclude each other")
	case a.try && a.wait != 0:
		return a, errors.New("--try and --wait exclude each other")
	case a.wait < 0:
		return a, fmt.Errorf("--wait %v: must be positive", a.wait)
	case a.sessionTimeout <= 0:
		return a, fmt.Errorf("--session-timeout %v: must be positive", a.sessionTimeout)
	}
	a.path = positional[0]
	if reason := client.ValidatePath(a.path, false); reason != "" {
		return a, fmt.Errorf("invalid PATH %q: %s", a.path, reason)
	}
	s := *servers
	if s == "" {
		s = os.Getenv("ZKIT_SERVERS")
	}
	if s == "" {
		s = "127.0.0.1:2181"
	}
	for _, srv := range strings.Split(s, ",") {
		if srv = strings.TrimSpace(srv); srv != "" {
			a.servers = append(a.servers, srv)
		}
	}
	if len(a.servers) == 0 {
		return a, fmt.Errorf("--servers %q names no server", s)
	}
	return a, nil
}

// runLock takes the lock, runs CMD while holding it and releases it. It
// returns CMD's exit status, or an error when the lock could not be taken
// or was lost while CMD ran (then CMD was sent SIGTERM). ctx ending (zkit
// got SIGINT or SIGTERM) is passed on to CMD as SIGTERM.
func runLock(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	a, err := parseLockArgs(args, stderr)
	if err != nil {
		return 0, err
	}
	acquireCtx := ctx
	if a.wait > 0 {
		var cancel context.CancelFunc
		acquireCtx, cancel = context.WithTimeout(ctx, a.wait)
		defer cancel()
	}
	connectCtx, cancelConnect := context.WithTimeout(acquireCtx, max(a.sessionTimeout, 10*time.Second))
	c, err := client.Connect(connectCtx, a.servers, client.WithSessionTimeout(a.sessionTimeout))
	cancelConnect()
	if err != nil {
		return 0, err
	}
	defer c.Close()

	lease, err := acquire(acquireCtx, c, a)
	switch {
	case errors.Is(err, recipes.ErrWouldBlock):
		return 0, fmt.Errorf("%s is held by another", a.path)
	case err != nil && acquireCtx.Err() != nil && ctx.Err() == nil:
		return 0, fmt.Errorf("%s not acquired within %v", a.path, a.wait)
	case err != nil:
		return 0, err
	}

	cmd := exec.Command(a.cmd[0], a.cmd[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Env = append(os.Environ(),
		"ZKIT_LOCK_NODE="+lease.Node(),
		"ZKIT_FENCING_TOKEN="+strconv.FormatInt(lease.Token(), 10))
	if err := cmd.Start(); err != nil {
		unlock(lease)
		return 0, err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	var lost error
	select {
	case <-exited:
	case <-lease.Done():
		lost = lease.Err()
		terminate(cmd, exited)
	case <-ctx.Done():
		terminate(cmd, exited)
	}
	if err := unlock(lease); err != nil && lost == nil && errors.Is(err, recipes.ErrLost) {
		lost = err // lost just as CMD ended
	}
	if lost != nil {
		return 0, fmt.Errorf("lock %s lost while %s ran: %v", a.path, a.cmd[0], lost)
	}
	return exitStatus(cmd.ProcessState), nil
}

func acquire(ctx context.Context, c *client.Client, a lockArgs) (*recipes.Lease, error) {
	if a.read || a.write {
		rw := rwlock.New(c, a.path)
		switch {
		case a.read && a.try:
			return rw.TryRLock(ctx)
		case a.read:
			return rw.RLock(ctx)
		case a.try:
			return rw.TryLock(ctx)
		}
		return rw.Lock(ctx)
	}
	l := lock.New(c, a.path)
	if a.try {
		return l.TryLock(ctx)
	}
	return l.Lock(ctx)
}

// terminate sends CMD SIGTERM, and SIGKILL if it has not exited after
// killGrace.
func terminate(cmd *exec.Cmd, exited <-chan struct{}) {
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(killGrace):
		cmd.Process.Kill()
		<-exited
	}
}

func unlock(lease *recipes.Lease) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return lease.Unlock(ctx)
}

// exitStatus is CMD's exit code, or 128+N when signal N killed it (as a
// shell reports it).
func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func indexOf(args []string, s string) int {
	for i, a := range args {
		if a == s {
			return i
		}
	}
	return -1
}

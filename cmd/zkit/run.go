package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// held is what a command holds while CMD runs: a lock lease, a leadership
// term, a group membership. Done is closed when it ends; Err says why.
type held interface {
	Done() <-chan struct{}
	Err() error
}

// runHelp ends the help of every command that runs CMD.
const runHelp = `How CMD runs: in a process group of its own, with every process it starts. When what
zkit holds is lost, the group gets SIGTERM; when zkit gets SIGHUP, SIGINT, SIGQUIT or
SIGTERM, the group gets that signal (SIGUSR1, SIGUSR2 and SIGPIPE do not stop zkit and
are not passed on). When CMD exits, what it left in the group gets SIGTERM. Whatever
is left of the group --kill-after later (default 5s) gets SIGKILL, and zkit releases
what it holds only once no process of the group is left (after SIGKILL it waits 5s at
most, for processes stuck in the kernel). If zkit is killed outright (SIGKILL, the OOM
killer), a supervisor process that zkit started for CMD kills the group. Processes
that leave the group (setsid, daemons) are not followed. On zkit's terminal CMD is the
foreground job: ^C goes to CMD, and zkit exits with CMD's status. (On Windows CMD is
killed outright, and the processes it started are not.)`

// hold prints what zkit holds (text, or v with -o json) and keeps it until
// zkit gets a stop signal (then nil: zkit exits 0) or it is lost (then
// why). The caller releases it.
func (a *app) hold(ctx context.Context, h held, text string, v any) error {
	if err := a.emit(text, v); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return nil
	case <-h.Done():
		return h.Err()
	}
}

// defaultKillAfter is --kill-after's default: how long CMD's process group
// has after its stop signal before SIGKILL.
const defaultKillAfter = 5 * time.Second

// errStopped is the loss reported when zkit itself was told to stop.
var errStopped = errors.New("zkit got a signal to stop")

// runWhileHeld runs argv, with env added to zkit's environment and zkit's
// standard streams, in a process group of its own under a supervisor
// (supervise.go), until no process of that group is left. When h ends,
// the group gets SIGTERM; when zkit gets a stop signal (signals.go), the
// group gets that signal (and ctx ends). Whatever is left of the group
// --kill-after later gets SIGKILL. If zkit dies, its supervisor SIGKILLs
// the group.
//
// It returns CMD's exit status (128+N if signal N killed it), and why h
// ended (errStopped if zkit was stopped) if that stopped CMD. If ctx had
// ended before, CMD does not start: the status is 128+N for stop signal N.
// So when runWhileHeld returns, nothing of CMD's group runs, and the
// caller may release what it holds.
func (a *app) runWhileHeld(ctx context.Context, h held, argv []string, env ...string) (status int, lost error, err error) {
	if len(argv) == 0 {
		return 0, nil, usagef("missing CMD after --")
	}
	if ctx.Err() != nil {
		return 128 + int(stopSignalOf(ctx)), errStopped, nil
	}
	p, err := startSupervised(argv, append(os.Environ(), env...), a.stdin, a.stdout, a.stderr, a.killAfter)
	if err != nil {
		return 0, nil, &startError{&exitError{code: exitFailed, msg: fmt.Sprintf("cannot start %s: %v", argv[0], err)}}
	}
	hDone, ctxDone := h.Done(), ctx.Done()
	for {
		select {
		case <-p.Done():
			status, err := p.wait()
			if err != nil {
				return 0, lost, failf("%v", err)
			}
			return status, lost, nil
		case <-hDone:
			hDone = nil
			if lost == nil {
				lost = h.Err()
			}
			p.signal(syscall.SIGTERM)
		case s := <-a.signals:
			if lost == nil {
				lost = errStopped
			}
			p.signal(s.(syscall.Signal))
		case <-ctxDone:
			ctxDone = nil
			if stoppedBy(ctx) != 0 {
				continue // that signal is on a.signals
			}
			if lost == nil {
				lost = errStopped
			}
			p.signal(syscall.SIGTERM)
		}
	}
}

// startError is the failure of a CMD that could not be started (not
// found, not executable): nothing ran, and running it again would not.
type startError struct{ *exitError }

func (e *startError) Unwrap() error { return e.exitError }

// stopSignalOf is the signal that ended ctx, SIGTERM if it ended
// otherwise.
func stopSignalOf(ctx context.Context) syscall.Signal {
	if s := stoppedBy(ctx); s != 0 {
		return s
	}
	return syscall.SIGTERM
}

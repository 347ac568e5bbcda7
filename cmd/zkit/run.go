package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// held is what a command holds while CMD runs: a lock lease, a leadership
// term, a group membership. Done is closed when it ends; Err says why.
type held interface {
	Done() <-chan struct{}
	Err() error
}

// killGrace is how long CMD has to exit after SIGTERM before it is killed.
const killGrace = 10 * time.Second

// errStopped is the loss reported when zkit itself was told to stop.
var errStopped = errors.New("zkit got a signal to stop")

// runWhileHeld runs argv, with env added to zkit's environment and zkit's
// standard streams, until it exits, h ends, or ctx ends (zkit got SIGINT or
// SIGTERM). In the last two cases CMD gets SIGTERM, then SIGKILL after
// killGrace. It returns CMD's exit status, and why h ended if it ended
// (errStopped if zkit was stopped) while CMD ran.
func (a *app) runWhileHeld(ctx context.Context, h held, argv []string, env ...string) (status int, lost error, err error) {
	if len(argv) == 0 {
		return 0, nil, usagef("missing CMD after --")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.stdin, a.stdout, a.stderr
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		return 0, nil, failf("cannot start %s: %v", argv[0], err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-h.Done():
		lost = h.Err()
		terminate(cmd, exited)
	case <-ctx.Done():
		lost = errStopped
		terminate(cmd, exited)
	}
	return exitStatus(cmd.ProcessState), lost, nil
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

// exitStatus is CMD's exit code, or 128+N when signal N killed it (as a
// shell reports it).
func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

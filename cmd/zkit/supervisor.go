//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// runSupervisor runs the supervisor if args (os.Args) ask for it, and
// returns its exit status and true; it returns false otherwise. main and
// the tests' TestMain call it first.
func runSupervisor(args []string) (int, bool) {
	if len(args) < 2 || args[1] != superviseArg {
		return 0, false
	}
	return superviseMain(args[2:]), true
}

// superviseMain is the supervisor (the protocol is described in
// supervise.go): args are KILL-AFTER CMD [ARGS], fd 3 the orders, fd 4 the
// report. It starts CMD in a new process group, forwards zkit's orders to
// that group, and exits once no process of the group is left: after CMD
// ended (whatever CMD left in its group gets SIGTERM, then SIGKILL
// KILL-AFTER later), after zkit ordered a stop (its signal, then SIGKILL
// KILL-AFTER later), or at once with SIGKILL when zkit is gone.
func superviseMain(args []string) int {
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	orders, report := os.NewFile(3, "orders"), os.NewFile(4, "report")
	if len(args) < 2 {
		fmt.Fprintf(os.Stderr, "zkit %s is zkit's own: it runs CMD for zkit lock, elect and the like\n", superviseArg)
		return exitUsage
	}
	killAfter, err := time.ParseDuration(args[0])
	if err != nil {
		fmt.Fprintf(report, "failed bad KILL-AFTER %q\n", args[0])
		return exitUsage
	}
	argv := args[1:]

	// Stop signals are zkit's to act on (systemd's stop signals every
	// process of the unit): the supervisor outlives them. Catching a
	// signal rather than ignoring it leaves CMD's default in place, and a
	// signal ignored from the start stays ignored for CMD.
	for _, s := range stopSignals {
		if !signal.Ignored(s) {
			signal.Notify(make(chan os.Signal, 1), s)
		}
	}
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	adoptOrphans()

	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(report, "failed %v\n", err)
		return exitFailed
	}
	attr := &syscall.SysProcAttr{Setpgid: true}
	zkitGroup := foregroundGroup()
	if zkitGroup > 0 {
		attr.Foreground, attr.Ctty = true, 0 // CMD gets the terminal (and its ^C, ^\)
	}
	// CMD's parent-death signal (where there is one) fires when the thread
	// that forked exits: this thread stays locked, and alive, until the
	// supervisor exits.
	runtime.LockOSThread()
	setParentDeathSignal(attr)
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   attr,
	})
	if err != nil {
		fmt.Fprintf(report, "failed fork/exec %s: %v\n", path, err)
		return exitFailed
	}
	fmt.Fprintf(report, "started %d\n", pid)
	// From now on the supervisor is a background process that may write to
	// the terminal (stderr) or take it back: SIGTTOU must not stop it.
	// CMD, started already, keeps its own SIGTTOU.
	signal.Ignore(syscall.SIGTTOU)

	g := &group{name: argv[0], pgid: pid, status: -1, killAfter: killAfter}
	g.run(readOrders(orders), children)
	if zkitGroup > 0 {
		giveBackTerminal(g.pgid, zkitGroup)
	}
	if g.status < 0 {
		g.status = 128 + int(syscall.SIGKILL) // not reaped: stuck after SIGKILL
	}
	fmt.Fprintf(report, "exited %d\n", g.status)
	return g.status
}

// readOrders delivers the signals zkit orders, and is closed at the end
// of the orders: zkit is gone.
func readOrders(orders *os.File) <-chan syscall.Signal {
	ch := make(chan syscall.Signal)
	go func() {
		defer close(ch)
		b := make([]byte, 1)
		for {
			if _, err := orders.Read(b); err != nil {
				return
			}
			ch <- syscall.Signal(b[0])
		}
	}()
	return ch
}

// group is CMD's process group, as the supervisor sees it.
type group struct {
	name      string // CMD, for messages
	pgid      int    // CMD's pid
	status    int    // CMD's exit status once reaped, else -1
	killAfter time.Duration

	stopping bool      // the group got its stop signal
	killAt   time.Time // when what is left of it gets SIGKILL
	killed   bool      // it got SIGKILL
	giveUp   time.Time // when the supervisor stops waiting after SIGKILL
}

// run supervises the group until it is gone (or the wait after SIGKILL
// ran out).
func (g *group) run(orders <-chan syscall.Signal, children <-chan os.Signal) {
	// While the group is stopping, its processes that are not the
	// supervisor's children end unannounced: look every 10ms.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		g.reap()
		if g.status >= 0 && !g.stopping {
			// CMD ended: what it left in its group goes too.
			if groupGone(g.pgid) {
				return
			}
			g.stop(syscall.SIGTERM)
		}
		if g.stopping {
			if groupGone(g.pgid) {
				return
			}
			now := time.Now()
			if !g.killed && !now.Before(g.killAt) {
				g.kill()
			}
			if g.killed && now.After(g.giveUp) {
				fmt.Fprintf(os.Stderr, "zkit: process group %d of %s still has processes %v after SIGKILL; not waiting for them\n", g.pgid, g.name, killWait)
				return
			}
		}
		var ticks <-chan time.Time
		if g.stopping {
			ticks = tick.C
		}
		select {
		case <-children:
		case <-ticks:
		case sig, ok := <-orders:
			switch {
			case !ok: // zkit is gone: no grace period, nobody to wait for
				orders = nil
				g.stopping = true
				g.kill()
			default:
				g.stop(sig)
			}
		}
	}
}

// stop sends sig to the group; the first stop starts the countdown to
// SIGKILL.
func (g *group) stop(sig syscall.Signal) {
	syscall.Kill(-g.pgid, sig)
	if !g.stopping {
		g.stopping = true
		g.killAt = time.Now().Add(g.killAfter)
	}
}

// kill sends SIGKILL to the group.
func (g *group) kill() {
	syscall.Kill(-g.pgid, syscall.SIGKILL)
	g.killed = true
	g.giveUp = time.Now().Add(killWait)
}

// reap collects every child that has exited (CMD, and where the system
// has subreapers the orphans of CMD's group), noting CMD's status.
func (g *group) reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, wNoHang, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
		if pid == g.pgid {
			g.status = waitStatus(ws)
		}
	}
}

// waitStatus is a process's exit code, or 128+N when signal N killed it
// (as a shell reports it).
func waitStatus(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

//go:build unix

package zktest

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Stop stops every node and waits for them: a Restart under way when Stop
// is called (from a goroutine of a test that then fails, say, and whose
// cleanup stops the servers) must not start a server after Stop returned.
func TestStopDuringRestartLeavesNothingRunning(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc")
	}
	z := StartZooKeeper(t)
	old := z.PID(0)
	// Hold the old JVM stopped, so that Restart is still waiting for it to
	// exit when Stop is called.
	if err := syscall.Kill(old, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, Scale(10*time.Second), "the old server to stop", func() bool { return strings.HasPrefix(procStatus(old, "State"), "T") })
	done := make(chan error, 1)
	go func() { done <- z.restart(0) }()
	waitFor(t, Scale(10*time.Second), "Restart to signal the old server", func() bool { return termPending(old) })
	z.Stop()
	var err error
	select {
	case err = <-done:
	case <-time.After(Scale(90 * time.Second)):
		t.Fatal("Restart did not return")
	}
	if pid := z.PID(0); pid != 0 {
		z.stop()
		t.Fatalf("after Stop returned, the Restart under way started server pid %d (Restart returned %v)", pid, err)
	}
	if err == nil {
		t.Fatal("a Restart overtaken by Stop reported success")
	}
}

// A test that paused a server (SIGSTOP) and failed before continuing it
// leaves it paused at cleanup: Stop must continue it so that it takes the
// SIGTERM, rather than wait out the grace period and SIGKILL it.
func TestStopContinuesPausedServer(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc")
	}
	z := StartZooKeeper(t)
	pid := z.PID(0)
	p := z.nodes[0].proc
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, Scale(10*time.Second), "the server to stop", func() bool { return strings.HasPrefix(procStatus(pid, "State"), "T") })
	z.Stop()
	if p.running() {
		t.Fatalf("pid %d still running after Stop", pid)
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		t.Fatalf("the paused server (pid %d) was SIGKILLed after the SIGTERM grace period: it was never continued", pid)
	}
}

// A node's ports come from below the kernel's ephemeral range, where no
// outgoing connection can take them while the node is down, and no other
// zktest process chooses them while they are claimed.
func TestFreePortsOutsideEphemeralRange(t *testing.T) {
	lo, hi := stablePortRange()
	if hi <= lo {
		t.Skipf("no stable range below the ephemeral ports here (%d, %d)", lo, hi)
	}
	claims, err := claimFreePorts(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range claims.ports {
		if p < lo || p >= hi || seen[p] {
			t.Fatalf("port %d: want distinct ports in [%d, %d), got %v", p, lo, hi, claims.ports)
		}
		seen[p] = true
		if f, ok := claimPort(p); ok {
			f.Close()
			t.Fatalf("port %d claimed twice", p)
		}
	}
	claims.release()
	for _, p := range claims.ports {
		f, ok := claimPort(p)
		if !ok {
			t.Fatalf("port %d still claimed after release", p)
		}
		f.Close()
	}
}

//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest"
)

// The tests of supervise.go: whatever stops CMD, nothing of CMD's process
// group runs once zkit has released what it held. A second holder's CMD
// checks that with kill -0 on the first CMD and its grandchild.

// zkitRun is the built zkit binary running, with its stderr.
type zkitRun struct {
	cmd    *exec.Cmd
	stderr syncBuffer
	done   chan struct{} // closed once it exited
}

// startZkit starts the built zkit with args in dir, talking to servers.
// The test's cleanup SIGKILLs it if it still runs (its supervisor then
// ends its CMD).
func startZkit(t *testing.T, bin, dir string, servers []string, args ...string) *zkitRun {
	t.Helper()
	z := &zkitRun{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	z.cmd.Dir = dir
	z.cmd.Env = append(os.Environ(), "ZKIT_SERVERS="+strings.Join(servers, ","))
	z.cmd.Stderr = &z.stderr
	z.cmd.WaitDelay = zktest.Scale(10 * time.Second)
	if err := z.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		z.cmd.Wait()
		close(z.done)
	}()
	t.Cleanup(func() {
		z.cmd.Process.Kill()
		<-z.done
	})
	return z
}

// status waits for zkit to exit and returns its exit status.
func (z *zkitRun) status(t *testing.T) int {
	t.Helper()
	select {
	case <-z.done:
		return z.cmd.ProcessState.ExitCode()
	case <-time.After(zktest.Scale(30 * time.Second)):
		t.Fatalf("zkit %q did not exit; stderr %q", z.cmd.Args[1:], z.stderr.String())
		return 0
	}
}

// familyCMD is a CMD that starts a grandchild (sleep, which ignores
// SIGINT and SIGQUIT: sh starts background commands so), writes "CMD-PID
// GRANDCHILD-PID" to dir/pids, then creates dir/ready, and waits. It runs
// nothing else in the foreground: sh, if it got SIGINT while it waited for
// a command that SIGINT did not kill (one that was finishing), would carry
// on.
func familyCMD(dir string) []string {
	return []string{"sh", "-c", `ulimit -c 0; sleep 300 & echo "$$ $!" > ` + dir + `/pids; : > ` + dir + `/ready; wait`}
}

// familyPIDs waits for dir/ready and returns the pids in dir/pids. The
// test's cleanup kills them if they are still there.
func familyPIDs(t *testing.T, dir string) []int {
	t.Helper()
	waitFile(t, filepath.Join(dir, "ready"))
	var pids []int
	for _, f := range strings.Fields(waitFile(t, filepath.Join(dir, "pids"))) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pids file: %v", err)
		}
		pids = append(pids, pid)
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return pids
}

// alive reports whether process pid can still run: it exists and, where
// the system says so, is not a zombie (an exited process nobody reaped:
// init does not reap in some containers).
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil && !zombie(pid) }

// checkGone fails the test if any of pids still exists.
func checkGone(t *testing.T, what string, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if alive(pid) {
			t.Fatalf("%s: process %d of the first CMD's group still runs", what, pid)
		}
	}
}

// waitGone waits until none of pids exists.
func waitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(10 * time.Second))
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still runs", pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// secondCMD is the CMD of a second holder: it notes in dir/log any of
// the first CMD's processes (pids) it finds running, then "second".
func secondCMD(dir string, pids []int) []string {
	var list []string
	for _, pid := range pids {
		list = append(list, strconv.Itoa(pid))
	}
	return []string{"sh", "-c", fmt.Sprintf(`for p in %s; do kill -0 $p 2>/dev/null && echo "overlap: $p runs" >> %s/log; done; echo second >> %[2]s/log`,
		strings.Join(list, " "), dir)}
}

// checkSecondAlone checks that the second holder ran, and alone.
func checkSecondAlone(t *testing.T, dir string) {
	t.Helper()
	if log := waitFile(t, filepath.Join(dir, "log")); log != "second" {
		t.Fatalf("the second holder's log %q: want \"second\" alone", log)
	}
}

// Each stop signal to zkit reaches CMD and its grandchild first (the
// grandchild ignores SIGINT and SIGQUIT: SIGKILL after --kill-after ends
// it), and only then does zkit release the lock: the waiting second
// holder never sees them. zkit exits with CMD's status.
func TestStopSignalEndsCommandGroupBeforeRelease(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGINT} {
			t.Run(signalName(sig), func(t *testing.T) {
				dir, path := t.TempDir(), zktest.UniquePath(t)
				first := startZkit(t, bin, dir, b.Servers, append([]string{"lock", path, "--kill-after", "1s", "--"}, familyCMD(dir)...)...)
				pids := familyPIDs(t, dir)
				second := startZkit(t, bin, dir, b.Servers, append([]string{"lock", path, "--"}, secondCMD(dir, pids)...)...)
				waitNodes(t, c, path, 2)
				first.cmd.Process.Signal(sig)
				if status := first.status(t); status != 128+int(sig) {
					t.Fatalf("zkit exited %d, want CMD's %d (stderr %q)", status, 128+int(sig), first.stderr.String())
				}
				checkGone(t, "when zkit exited", pids)
				if status := second.status(t); status != 0 {
					t.Fatalf("the second holder exited %d: %q", status, second.stderr.String())
				}
				checkSecondAlone(t, dir)
			})
		}
	})
}

// Every command that runs CMD ends CMD's whole group before it exits.
func TestEveryCommandEndsCommandGroup(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		for _, cmd := range [][]string{
			{"lock", "PATH"},
			{"lock", "PATH", "--read"},
			{"elect", "PATH", "--id", "a"},
			{"members", "PATH", "join", "a"},
			{"barrier", "PATH", "--count", "1"},
			{"rendezvous", "PATH", "create"},
			{"rendezvous", "PATH", "publish", "v", "--own"},
		} {
			t.Run(strings.Join(cmd, "_"), func(t *testing.T) {
				dir, path := t.TempDir(), zktest.UniquePath(t)
				args := append([]string{}, cmd...)
				args[1] = path
				args = append(append(args, "--kill-after", "1s", "--"), familyCMD(dir)...)
				z := startZkit(t, bin, dir, b.Servers, args...)
				pids := familyPIDs(t, dir)
				z.cmd.Process.Signal(syscall.SIGHUP)
				if status := z.status(t); status != 128+int(syscall.SIGHUP) {
					t.Fatalf("zkit exited %d, want 129 (stderr %q)", status, z.stderr.String())
				}
				checkGone(t, "when zkit exited", pids)
			})
		}
	})
}

// zkit killed outright cannot act, but its supervisor sees it gone and
// kills CMD's group: CMD and its grandchild die, and the second holder,
// which gets the lock once the dead session expires, never sees them.
func TestKilledZkitTakesCommandGroupWithIt(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		dir, path := t.TempDir(), zktest.UniquePath(t)
		timeout := "--session-timeout=" + zktest.Scale(2*time.Second).String()
		first := startZkit(t, bin, dir, b.Servers, append([]string{"lock", path, timeout, "--"}, familyCMD(dir)...)...)
		pids := familyPIDs(t, dir)
		second := startZkit(t, bin, dir, b.Servers, append([]string{"lock", path, "--"}, secondCMD(dir, pids)...)...)
		waitNodes(t, b.Connect(t), path, 2)
		first.cmd.Process.Signal(syscall.SIGKILL)
		waitGone(t, pids)
		if status := second.status(t); status != 0 {
			t.Fatalf("the second holder exited %d: %q", status, second.stderr.String())
		}
		checkSecondAlone(t, dir)
	})
}

// A supervisor whose zkit died before it even started CMD (its orders
// pipe is at end of file from the start) kills CMD at once: CMD never
// gets to its work.
func TestSupervisorOrphanedAtStartKillsCommand(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	dir := t.TempDir()
	ordersR, ordersW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	reportR, reportW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ordersW.Close() // zkit is gone
	sup := exec.Command(bin, superviseArg, "5s", "sh", "-c", "sleep 5; touch "+dir+"/ran")
	sup.ExtraFiles = []*os.File{ordersR, reportW}
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	ordersR.Close()
	reportW.Close()
	done := make(chan error, 1)
	go func() { done <- sup.Wait() }()
	select {
	case <-done:
	case <-time.After(zktest.Scale(10 * time.Second)):
		sup.Process.Kill()
		t.Fatal("the supervisor did not exit")
	}
	report, _ := readAll(reportR)
	var pid, status int
	if n, _ := fmt.Sscanf(report, "started %d\nexited %d\n", &pid, &status); n != 2 || status != 128+int(syscall.SIGKILL) {
		t.Fatalf("report %q: want CMD started and killed", report)
	}
	if !groupGone(pid) {
		t.Fatalf("CMD's group %d runs after its supervisor exited", pid)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatal("CMD ran its course without zkit")
	}
}

func readAll(f *os.File) (string, error) {
	defer f.Close()
	var b strings.Builder
	buf := make([]byte, 512)
	for {
		n, err := f.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String(), nil
		}
	}
}

// A lost lock: CMD's group gets SIGTERM, which ends CMD and one
// grandchild at once; a grandchild that ignores SIGTERM gets SIGKILL
// --kill-after later; zkit exits 5 only once both are gone.
func TestLockLostEndsCommandGroup(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		dir, path := t.TempDir(), zktest.UniquePath(t)
		c := b.Connect(t)
		killAfter := zktest.Scale(time.Second)
		z := startZkit(t, bin, dir, b.Servers, "lock", path, "--kill-after", killAfter.String(), "--", "sh", "-c",
			`sleep 300 & a=$!
			sh -c 'trap "" TERM; echo $$ > ignorer.tmp && mv ignorer.tmp ignorer; while :; do sleep 0.05; done' &
			while [ ! -e ignorer ]; do sleep 0.01; done # it ignores SIGTERM now
			echo "$$ $a $(cat ignorer)" > pids; : > ready; wait`)
		pids := familyPIDs(t, dir)
		nodes, _, err := c.Children(t.Context(), path)
		if err != nil || len(nodes) != 1 {
			t.Fatalf("lock nodes %v, %v", nodes, err)
		}
		lost := time.Now()
		if err := c.Delete(t.Context(), path+"/"+nodes[0], -1); err != nil {
			t.Fatal(err)
		}
		waitGone(t, pids[:2]) // SIGTERM ends CMD and the plain grandchild ...
		if time.Since(lost) < killAfter && !alive(pids[2]) {
			t.Fatal("the grandchild that ignores SIGTERM died before --kill-after")
		}
		if status := z.status(t); status != exitLost {
			t.Fatalf("zkit exited %d, want %d (stderr %q)", status, exitLost, z.stderr.String())
		}
		if took := time.Since(lost); took < killAfter {
			t.Fatalf("zkit exited %v after the loss, before --kill-after %v", took, killAfter)
		}
		checkGone(t, "when zkit exited", pids) // ... SIGKILL the other
		oneErrorLine(t, result{stderr: z.stderr.String()}, "lost while sh ran")
	})
}

// The supervisor killed by someone (not zkit): on Linux CMD dies with it
// (its parent-death signal); zkit kills the rest of CMD's group itself,
// says so and exits 1, releasing the lock only then.
func TestSupervisorKilledAloneZkitEndsGroup(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		dir, path := t.TempDir(), zktest.UniquePath(t)
		z := startZkit(t, bin, dir, b.Servers, "lock", path, "--", "sh", "-c",
			`sleep 300 & echo "$$ $! $PPID" > pids; : > ready; wait`)
		pids := familyPIDs(t, dir)
		supervisor := pids[2]
		syscall.Kill(supervisor, syscall.SIGKILL)
		if status := z.status(t); status != exitFailed {
			t.Fatalf("zkit exited %d, want %d (stderr %q)", status, exitFailed, z.stderr.String())
		}
		checkGone(t, "when zkit exited", pids[:2])
		oneErrorLine(t, result{stderr: z.stderr.String()}, "supervisor", "ended abnormally", "killed CMD's process group")
		waitNodes(t, b.Connect(t), path, 0)
	})
}

// CMD exits, leaving a process in its group (one that ignores SIGTERM):
// it gets SIGTERM, then SIGKILL --kill-after later, and zkit exits with
// CMD's status, releasing the lock, only once it is gone.
func TestCommandExitEndsWhatItLeft(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		dir, path := t.TempDir(), zktest.UniquePath(t)
		killAfter := zktest.Scale(time.Second)
		first := startZkit(t, bin, dir, b.Servers, "lock", path, "--kill-after", killAfter.String(), "--", "sh", "-c",
			`sh -c 'trap "" TERM; echo $$ > left.tmp && mv left.tmp left; exec sleep 300' &
			while [ ! -e left ]; do sleep 0.01; done # it ignores SIGTERM now
			echo "$$ $(cat left)" > pids; : > ready; exit 3`)
		pids := familyPIDs(t, dir)
		// CMD exited right after it made ready: ready's time, not the
		// moment the test noticed ready (up to a poll later), starts the
		// wait for --kill-after.
		fi, err := os.Stat(filepath.Join(dir, "ready"))
		if err != nil {
			t.Fatal(err)
		}
		exited := fi.ModTime()
		second := startZkit(t, bin, dir, b.Servers, append([]string{"lock", path, "--"}, secondCMD(dir, pids)...)...)
		if status := first.status(t); status != 3 {
			t.Fatalf("zkit exited %d, want CMD's 3 (stderr %q)", status, first.stderr.String())
		}
		if took := time.Since(exited); took < killAfter {
			t.Fatalf("zkit exited %v after CMD, before --kill-after %v", took, killAfter)
		}
		checkGone(t, "when zkit exited", pids)
		if status := second.status(t); status != 0 {
			t.Fatalf("the second holder exited %d: %q", status, second.stderr.String())
		}
		checkSecondAlone(t, dir)
	})
}

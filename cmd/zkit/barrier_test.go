package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/zktest"
)

// The first member's CMD does not start before the last member arrives;
// both exit with their CMD's status, and nothing is left behind.
func TestBarrierRunsTogether(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	var out, errb syncBuffer
	first := make(chan int, 1)
	go func() {
		first <- execute([]string{"barrier", "/phase", "--count", "2", "--servers", servers, "--",
			"sh", "-c", `echo "in $ZKIT_BARRIER_COUNT $ZKIT_BARRIER_NODE"; exit 3`},
			strings.NewReader(""), &out, &errb)
	}()
	waitNodes(t, c, "/phase", 1)
	time.Sleep(zktest.Scale(100 * time.Millisecond))
	if out.String() != "" {
		t.Fatalf("CMD ran with 1 of 2 members in: %q", out.String())
	}
	if r := zkit(t, "barrier", "/phase", "--count", "2", "--servers", servers, "--", "true"); r.status != 0 {
		t.Fatalf("second member: %+v", r)
	}
	select {
	case status := <-first:
		if status != 3 || errb.String() != "" {
			t.Fatalf("first member: status %d, stderr %q: want CMD's 3 and nothing from zkit", status, errb.String())
		}
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatal("the first member did not finish")
	}
	if f := strings.Fields(out.String()); len(f) != 3 || f[1] != "2" || !strings.HasPrefix(f[2], "/phase/") {
		t.Fatalf("CMD saw %q", out.String())
	}
	if ch, _, err := c.Children(ctx, "/phase"); err != nil || len(ch) != 0 {
		t.Fatalf("left behind: %v, %v", ch, err)
	}
}

func TestBarrierWaitTimesOut(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	r := zkit(t, "barrier", "/lonely", "--count", "2", "--wait", "200ms", "--servers", servers, "--", "true")
	if r.status != exitTimeout {
		t.Fatalf("status %d, want %d", r.status, exitTimeout)
	}
	oneErrorLine(t, r, "zkit barrier: ", "/lonely", "did not open within 200ms")
	if ch, _, err := c.Children(ctx, "/lonely"); err != nil || len(ch) != 0 {
		t.Fatalf("left behind: %v, %v", ch, err)
	}
}

// A member that vanishes inside the barrier: the command still waits for
// every node to go, then says so with status 5.
func TestBarrierMemberLost(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	other := barrier.NewDouble(c, "/lost", 2)
	entered := make(chan error, 1)
	go func() { entered <- other.Enter(ctx) }()
	waitNodes(t, c, "/lost", 1)
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- execute([]string{"barrier", "/lost", "--count", "2", "--servers", servers, "--", "sh", "-c", "sleep 0.2"},
			strings.NewReader(""), &out, &errb)
	}()
	if err := <-entered; err != nil {
		t.Fatal(err)
	}
	c.Close() // the library member vanishes while the command's CMD runs
	select {
	case status := <-done:
		if status != exitLost {
			t.Fatalf("status %d, want %d", status, exitLost)
		}
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatal("zkit barrier hung after a member vanished")
	}
	oneErrorLine(t, result{stderr: errb.String()}, "zkit barrier: ", "/lost", "member was lost")
}

func TestBarrierBadArguments(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"/x", "--", "true"},
		{"/x", "--count", "0", "--", "true"},
		{"/x", "--count", "-2", "--", "true"},
		{"/x", "--count", "2"},
		{"/x", "--count", "2", "--"},
		{"/", "--count", "2", "--", "true"},
		{"relative", "--count", "2", "--", "true"},
		{"/x", "--count", "2", "--wait", "-1s", "--", "true"},
		{"/x", "/y", "--count", "2", "--", "true"},
	} {
		r := zkit(t, append([]string{"barrier"}, args...)...)
		if r.status != exitUsage {
			t.Errorf("zkit barrier %q: status %d, want %d", args, r.status, exitUsage)
			continue
		}
		oneErrorLine(t, r, "zkit barrier: ", "zkit barrier --help")
	}
}

// Processes of the binary, three at a time, round after round on one path:
// no CMD starts before every process has arrived, and no process gets out
// before every CMD has ended.
func TestBarrierProcesses(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, _, _ := env(t)
	res := t.TempDir()
	const procs, rounds = 3, 3
	count := func(prefix string) int {
		entries, _ := os.ReadDir(res)
		n := 0
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), prefix) {
				n++
			}
		}
		return n
	}
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range rounds {
				if err := os.WriteFile(fmt.Sprintf("%s/arrived-%d-%d", res, k, p), nil, 0o644); err != nil {
					t.Error(err)
					return
				}
				script := fmt.Sprintf(`[ "$(ls %[1]s | grep -c '^arrived-%[2]d-')" = %[3]d ] || exit 9; touch %[1]s/ended-%[2]d-%[4]d`, res, k, procs, p)
				cmd := exec.Command(bin, "barrier", "/procs", "--count", fmt.Sprint(procs), "--", "sh", "-c", script)
				cmd.Env = append(os.Environ(), "ZKIT_SERVERS="+servers)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("process %d, round %d: %v\n%s", p, k, err, out)
					return
				}
				if n := count(fmt.Sprintf("ended-%d-", k)); n != procs {
					t.Errorf("process %d left round %d when %d of %d commands had ended", p, k, n, procs)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Once CMD ran, zkit exits with CMD's status (exit.go): a barrier member
// stopped by SIGTERM while it waits for the others to leave, its CMD done
// with status 0, exits 0, as it exits with CMD's status when CMD failed.
func TestBarrierStoppedWhileLeavingExitsWithCommandStatus(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, _, _ := env(t)
	path := zktest.UniquePath(t)
	dir := t.TempDir()
	b := start(t, bin, "--servers", servers, "barrier", path, "--count", "2", "--",
		"sh", "-c", `touch "$0"; exec sleep 60`, filepath.Join(dir, "b"))
	a := start(t, bin, "--servers", servers, "barrier", path, "--count", "2", "--",
		"touch", filepath.Join(dir, "a"))
	waitFile(t, filepath.Join(dir, "a"))
	waitFile(t, filepath.Join(dir, "b"))
	// a's CMD has exited once a's supervisor, its only child, is gone: a
	// waits in Leave for b, whose CMD still runs.
	children := fmt.Sprintf("/proc/%d/task/%d/children", a.cmd.Process.Pid, a.cmd.Process.Pid)
	deadline := time.Now().Add(zktest.Scale(20 * time.Second))
	for {
		kids, err := os.ReadFile(children)
		if err != nil {
			t.Skipf("no %s: %v", children, err)
		}
		if strings.TrimSpace(string(kids)) == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a's CMD still runs: children %q", kids)
		}
		time.Sleep(5 * time.Millisecond)
	}
	a.cmd.Process.Signal(syscall.SIGTERM)
	if status := a.wait(t); status != exitOK {
		t.Fatalf("member stopped while leaving after CMD exited 0: status %d, want CMD's 0 (stderr %q)", status, a.stderr.String())
	}
	_ = b
}

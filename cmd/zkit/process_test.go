//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest"
)

// zkitProcess starts the built zkit binary in a process group of its own
// (so that its CMD goes with it), talking to servers.
func zkitProcess(t *testing.T, bin string, servers []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ZKIT_SERVERS="+strings.Join(servers, ","))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the group this test started
		cmd.Wait()
	})
	return cmd
}

// A leader process killed outright (no resign): once its session expires
// the waiting process leads, with a higher fencing token.
func TestElectHandsOverWhenLeaderKilled(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		dir, path := t.TempDir(), zktest.UniquePath(t)
		timeout := "--session-timeout=" + zktest.Scale(4*time.Second).String()
		first := zkitProcess(t, bin, b.Servers, "elect", path, "--id", "first", timeout, "--", "sh", "-c",
			`echo "$ZKIT_FENCING_TOKEN" > `+dir+`/t1 && mv `+dir+`/t1 `+dir+`/first; while :; do sleep 0.05; done`)
		firstToken := waitFile(t, filepath.Join(dir, "first"))
		second := zkitProcess(t, bin, b.Servers, "elect", path, "--id", "second", timeout, "--", "sh", "-c",
			`echo "$ZKIT_FENCING_TOKEN" > `+dir+`/t2 && mv `+dir+`/t2 `+dir+`/second`)
		c := b.Connect(t)
		waitNodes(t, c, path, 2)
		if _, err := os.Stat(filepath.Join(dir, "second")); err == nil {
			t.Fatal("the second process ran CMD while the first led")
		}
		killed := time.Now()
		syscall.Kill(-first.Process.Pid, syscall.SIGKILL)
		secondToken := waitFile(t, filepath.Join(dir, "second"))
		t.Logf("handed over %v after the kill", time.Since(killed).Round(time.Millisecond))
		a, _ := strconv.ParseInt(firstToken, 10, 64)
		z, _ := strconv.ParseInt(secondToken, 10, 64)
		if a <= 0 || z <= a {
			t.Fatalf("fencing tokens %q then %q: want positive and increasing", firstToken, secondToken)
		}
		done := make(chan error, 1)
		go func() { done <- second.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("the second process: %v, want CMD's status 0", err)
			}
		case <-time.After(zktest.Scale(20 * time.Second)):
			t.Fatal("the second process did not exit after its CMD")
		}
	})
}

// Processes adding 1 at once reach the exact total, each seeing its own
// result.
func TestCounterProcessesReachExactTotal(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		path := zktest.UniquePath(t) + "/hits"
		const procs, each = 6, 5
		var (
			mu      sync.Mutex
			results []int
			wg      sync.WaitGroup
		)
		for range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					cmd := exec.Command(bin, "counter", path, "add", "1")
					cmd.Env = append(os.Environ(), "ZKIT_SERVERS="+strings.Join(b.Servers, ","))
					out, err := cmd.Output()
					if err != nil {
						t.Errorf("zkit counter add 1: %v", err)
						return
					}
					n, err := strconv.Atoi(strings.TrimSpace(string(out)))
					if err != nil {
						t.Errorf("zkit counter printed %q", out)
						return
					}
					mu.Lock()
					results = append(results, n)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		slices.Sort(results)
		for i, n := range results {
			if n != i+1 {
				t.Fatalf("results %v: want each of 1..%d once", results, procs*each)
			}
		}
		cmd := exec.Command(bin, "counter", path, "get")
		cmd.Env = append(os.Environ(), "ZKIT_SERVERS="+strings.Join(b.Servers, ","))
		if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != strconv.Itoa(procs*each) {
			t.Fatalf("zkit counter get: %q, %v; want %d", out, err, procs*each)
		}
	})
}

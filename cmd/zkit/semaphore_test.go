package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

func TestSemaphoreRunsCommandWithNodeAndToken(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	r := zkit(t, "semaphore", "/jobs/export", "--max", "3", "--servers", servers, "--",
		"sh", "-c", `echo "$ZKIT_SEMAPHORE_NODE $ZKIT_SEMAPHORE_MAX $ZKIT_FENCING_TOKEN"; exit 3`)
	if r.status != 3 || r.stderr != "" {
		t.Fatalf("status %d, stderr %q: want CMD's 3 and nothing from zkit", r.status, r.stderr)
	}
	f := strings.Fields(r.stdout)
	if len(f) != 3 || !strings.HasPrefix(f[0], "/jobs/export/leases/_c_") || !strings.Contains(f[0], "-lease-") || f[1] != "3" {
		t.Fatalf("CMD saw %q", r.stdout)
	}
	if tok, err := strconv.ParseInt(f[2], 10, 64); err != nil || tok <= 0 {
		t.Fatalf("fencing token %q", f[2])
	}
	if ch, _, err := c.Children(ctx, "/jobs/export/leases"); err != nil || len(ch) != 0 {
		t.Fatalf("after CMD: lease nodes %v, %v", ch, err)
	}
}

func TestSemaphoreFull(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	var held []*semaphore.Lease
	for range 2 {
		l, err := semaphore.New(c, "/jobs/x", 2).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	r := zkit(t, "semaphore", "/jobs/x", "--max", "2", "--try", "--servers", servers, "--", "true")
	if r.status != exitTimeout {
		t.Fatalf("--try on a full semaphore: status %d, want %d", r.status, exitTimeout)
	}
	oneErrorLine(t, r, "zkit semaphore: ", "/jobs/x", "all 2 leases are held")
	r = zkit(t, "--servers", servers, "semaphore", "--wait", "200ms", "/jobs/x", "--max", "2", "--", "true")
	if r.status != exitTimeout {
		t.Fatalf("--wait on a full semaphore: status %d, want %d", r.status, exitTimeout)
	}
	oneErrorLine(t, r, "no lease within 200ms")
	// Waiting without a bound gets a lease once a holder lets go.
	done := make(chan result, 1)
	go func() { done <- zkit(t, "semaphore", "/jobs/x", "--max", "2", "--servers", servers, "--", "true") }()
	waitNodes(t, c, "/jobs/x/locks", 1)
	held[0].Unlock(ctx)
	if r := <-done; r.status != 0 {
		t.Fatalf("waiting semaphore: %+v", r)
	}
	held[1].Unlock(ctx)
}

func TestSemaphoreLostTerminatesCommand(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		// CMD's whole group gets SIGTERM, sleep too: 2>/dev/null keeps sh's "Terminated" out of stderr.
		done <- execute([]string{"semaphore", "/jobs/y", "--max", "2", "--servers", servers, "--", "sh", "-c",
			`trap 'echo got-term; exit 0' TERM; echo started; while :; do sleep 0.02; done 2>/dev/null`},
			strings.NewReader(""), &out, &errb)
	}()
	waitOutput(t, &out, "started")
	nodes, _, err := c.Children(ctx, "/jobs/y/leases")
	if err != nil || len(nodes) != 1 {
		t.Fatalf("lease nodes %v, %v", nodes, err)
	}
	// Someone deletes the lease node: the lease is lost.
	if err := c.Delete(ctx, "/jobs/y/leases/"+nodes[0], -1); err != nil {
		t.Fatal(err)
	}
	select {
	case status := <-done:
		if status != exitLost {
			t.Fatalf("status %d after losing the lease, want %d", status, exitLost)
		}
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatal("zkit semaphore did not stop CMD when the lease was lost")
	}
	oneErrorLine(t, result{stderr: errb.String()}, "lost while sh ran")
	if !strings.Contains(out.String(), "got-term") {
		t.Fatalf("CMD did not get SIGTERM: %q", out.String())
	}
}

func TestSemaphoreBadArguments(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"/x", "--max", "2"},
		{"/x", "--max", "2", "--"},
		{"/x", "--", "true"},
		{"/x", "--max", "0", "--", "true"},
		{"/x", "--max", "-1", "--", "true"},
		{"/x", "--max", "two", "--", "true"},
		{"relative", "--max", "2", "--", "true"},
		{"/x", "--max", "2", "--try", "--wait", "1s", "--", "true"},
		{"/x", "--max", "2", "--wait", "-1s", "--", "true"},
		{"/x", "/y", "--max", "2", "--", "true"},
	} {
		r := zkit(t, append([]string{"semaphore"}, args...)...)
		if r.status != exitUsage {
			t.Errorf("zkit semaphore %q: status %d, want %d", args, r.status, exitUsage)
			continue
		}
		oneErrorLine(t, r, "zkit semaphore: ", "zkit semaphore --help")
	}
}

// zkit semaphore processes never run more than N CMDs at once: each CMD
// puts a file of its own in a shared directory and counts the files.
func TestSemaphoreProcesses(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const procs, rounds, max = 5, 4, 2
		res := t.TempDir()
		path := zktest.UniquePath(t)
		script := fmt.Sprintf(`f=%[1]s/in.$$; touch $f; n=$(ls %[1]s | wc -l); sleep 0.02; rm $f; echo $n >> %[1]s.counts; test $n -le %[2]d || exit 9`, res, max)
		var wg sync.WaitGroup
		for range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					cmd := exec.Command(bin, "semaphore", path, "--max", strconv.Itoa(max), "--", "sh", "-c", script)
					cmd.Env = append(os.Environ(), "ZKIT_SERVERS="+strings.Join(b.Servers, ","))
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Errorf("zkit semaphore: %v\n%s", err, out)
						return
					}
				}
			}()
		}
		wg.Wait()
		data, err := os.ReadFile(res + ".counts")
		if err != nil {
			t.Fatal(err)
		}
		if counts := strings.Fields(string(data)); len(counts) != procs*rounds {
			t.Fatalf("%d CMDs ran, want %d", len(counts), procs*rounds)
		}
	})
}

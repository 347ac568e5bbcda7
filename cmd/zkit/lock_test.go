package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/zktest"
)

func TestLockRunsCommandWithNodeAndToken(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	r := zkit(t, "lock", "/jobs/nightly", "--servers", servers, "--",
		"sh", "-c", `echo "$ZKIT_LOCK_NODE $ZKIT_FENCING_TOKEN"; exit 3`)
	if r.status != 3 || r.stderr != "" {
		t.Fatalf("status %d, stderr %q: want CMD's 3 and nothing from zkit", r.status, r.stderr)
	}
	f := strings.Fields(r.stdout)
	if len(f) != 2 || !strings.HasPrefix(f[0], "/jobs/nightly/_c_") || !strings.Contains(f[0], "-lock-") {
		t.Fatalf("CMD saw %q", r.stdout)
	}
	if tok, err := strconv.ParseInt(f[1], 10, 64); err != nil || tok <= 0 {
		t.Fatalf("fencing token %q", f[1])
	}
	if ch, _, err := c.Children(ctx, "/jobs/nightly"); err != nil || len(ch) != 0 {
		t.Fatalf("after CMD: nodes %v, %v", ch, err)
	}
}

func TestLockExcludes(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	held, err := lock.New(c, "/jobs/x").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := zkit(t, "lock", "/jobs/x", "--try", "--servers", servers, "--", "true")
	if r.status != exitTimeout {
		t.Fatalf("--try on a held lock: status %d, want %d", r.status, exitTimeout)
	}
	oneErrorLine(t, r, "zkit lock: ", "/jobs/x", "held by another")
	r = zkit(t, "--servers", servers, "lock", "--wait", "200ms", "/jobs/x", "--", "true")
	if r.status != exitTimeout {
		t.Fatalf("--wait on a held lock: status %d, want %d", r.status, exitTimeout)
	}
	oneErrorLine(t, r, "not acquired within 200ms")
	// Waiting without a bound gets it once the holder lets go.
	done := make(chan result, 1)
	go func() { done <- zkit(t, "lock", "/jobs/x", "--servers", servers, "--", "true") }()
	waitNodes(t, c, "/jobs/x", 2)
	held.Unlock(ctx)
	if r := <-done; r.status != 0 {
		t.Fatalf("waiting lock: %+v", r)
	}
}

func TestLockReadWrite(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	r, err := rwlock.New(c, "/cfg").RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res := zkit(t, "lock", "/cfg", "--read", "--try", "--servers", servers, "--", "true"); res.status != 0 {
		t.Fatalf("--read next to a reader: %+v", res)
	}
	if res := zkit(t, "lock", "/cfg", "--write", "--try", "--servers", servers, "--", "true"); res.status != exitTimeout {
		t.Fatalf("--write next to a reader: %+v", res)
	}
	r.Unlock(ctx)
	if res := zkit(t, "lock", "/cfg", "--write", "--try", "--servers", servers, "--", "true"); res.status != 0 {
		t.Fatalf("--write on a free lock: %+v", res)
	}
}

func TestLockLostTerminatesCommand(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		// CMD's whole group gets SIGTERM, sleep too: 2>/dev/null keeps sh's "Terminated" out of stderr.
		done <- execute([]string{"lock", "/jobs/y", "--servers", servers, "--", "sh", "-c",
			`trap 'echo got-term; exit 0' TERM; echo started; while :; do sleep 0.02; done 2>/dev/null`},
			strings.NewReader(""), &out, &errb)
	}()
	waitOutput(t, &out, "started")
	nodes, _, err := c.Children(ctx, "/jobs/y")
	if err != nil || len(nodes) != 1 {
		t.Fatalf("lock nodes %v, %v", nodes, err)
	}
	// Someone deletes the lock node: the lock is lost.
	if err := c.Delete(ctx, "/jobs/y/"+nodes[0], -1); err != nil {
		t.Fatal(err)
	}
	select {
	case status := <-done:
		if status != exitLost {
			t.Fatalf("status %d after losing the lock, want %d", status, exitLost)
		}
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatal("zkit lock did not stop CMD when the lock was lost")
	}
	oneErrorLine(t, result{stderr: errb.String()}, "lost while sh ran")
	if !strings.Contains(out.String(), "got-term") {
		t.Fatalf("CMD did not get SIGTERM: %q", out.String())
	}
}

func TestLockBadArguments(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"/x", "--"},
		{"/x", "true"},
		{"relative", "--", "true"},
		{"/x", "--read", "--write", "--", "true"},
		{"/x", "--try", "--wait", "1s", "--", "true"},
		{"/x", "--wait", "-1s", "--", "true"},
		{"/x", "--bogus", "--", "true"},
		{"/x", "/y", "--", "true"},
		{"/x", "--servers", "host:port", "--", "true"},
	} {
		r := zkit(t, append([]string{"lock"}, args...)...)
		if r.status != exitUsage {
			t.Errorf("zkit lock %q: status %d, want %d", args, r.status, exitUsage)
			continue
		}
		oneErrorLine(t, r, "zkit lock: ", "zkit lock --help")
	}
}

// Two zkit lock processes never hold at once: each CMD marks the resource
// with mkdir, which fails if the other is inside.
func TestLockProcessesExclude(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		res := t.TempDir()
		path := zktest.UniquePath(t)
		script := fmt.Sprintf(`mkdir %[1]s/in || exit 9; echo $ZKIT_FENCING_TOKEN >> %[1]s/tokens; sleep 0.01; rmdir %[1]s/in`, res)
		const procs, rounds = 4, 5
		var wg sync.WaitGroup
		for range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					cmd := exec.Command(bin, "lock", path, "--", "sh", "-c", script)
					cmd.Env = append(os.Environ(), "ZKIT_SERVERS="+strings.Join(b.Servers, ","))
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Errorf("zkit lock: %v\n%s", err, out)
						return
					}
				}
			}()
		}
		wg.Wait()
		data, err := os.ReadFile(filepath.Join(res, "tokens"))
		if err != nil {
			t.Fatal(err)
		}
		tokens := strings.Fields(string(data))
		if len(tokens) != procs*rounds {
			t.Fatalf("%d critical sections ran, want %d", len(tokens), procs*rounds)
		}
		for i := 1; i < len(tokens); i++ {
			a, _ := strconv.ParseInt(tokens[i-1], 10, 64)
			b, _ := strconv.ParseInt(tokens[i], 10, 64)
			if b <= a {
				t.Fatalf("fencing tokens went %d then %d", a, b)
			}
		}
	})
}

// The binary exits with CMD's status, and prints errors as one line.
func TestLockBinary(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, c, ctx := env(t)
	cmd := exec.Command(bin, "lock", "/b", "--servers", servers, "--", "sh", "-c", "exit 7")
	if err := cmd.Run(); cmd.ProcessState.ExitCode() != 7 {
		t.Fatalf("exit: %v, want status 7", err)
	}
	held, err := lock.New(c, "/b").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock(context.Background())
	cmd = exec.Command(bin, "lock", "/b", "--try", "--", "true")
	cmd.Env = append(cmd.Environ(), "ZKIT_SERVERS="+servers)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	cmd.Run()
	if cmd.ProcessState.ExitCode() != exitTimeout {
		t.Fatalf("--try on a held lock: status %d, want %d", cmd.ProcessState.ExitCode(), exitTimeout)
	}
	oneErrorLine(t, result{stderr: stderr.String()}, "held by another")
}

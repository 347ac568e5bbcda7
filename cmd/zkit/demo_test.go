package main

import (
	"context"
	"errors"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest"
)

// The main job passes its own invariant checks (zkit exits non-zero when
// any fails) and ends with the table.
func TestDemo(t *testing.T) {
	t.Parallel()
	r := zkit(t, "demo", "--workers", "4", "--rounds", "10")
	if r.status != 0 {
		t.Fatalf("status %d\n%s%s", r.status, r.stdout, r.stderr)
	}
	for _, s := range demoSteps {
		if !strings.Contains(r.stdout, "ok   "+s.recipe) {
			t.Errorf("no ok line for %s: %s", s.recipe, s.name)
		}
	}
	if !strings.Contains(r.stdout, "RECIPE") || strings.Count(r.stdout, "held") < len(demoSteps) {
		t.Fatalf("no table with every step held:\n%s", r.stdout)
	}

	// One clock: the lock step's line and the table show the same rate.
	line := regexp.MustCompile(`(?m)^ok   lock .* handoffs, (\d+)/s,`).FindStringSubmatch(r.stdout)
	row := regexp.MustCompile(`(?m)^lock +contention with fenced writes +\d+ +(\d+)/s `).FindStringSubmatch(r.stdout)
	if line == nil || row == nil || line[1] != row[1] {
		t.Fatalf("the lock step's rate: line %q, table %q:\n%s", line, row, r.stdout)
	}
	// The step lines keep their columns: every detail starts at one column.
	col := -1
	for _, l := range strings.Split(r.stdout, "\n") {
		if !strings.HasPrefix(l, "ok   ") {
			continue
		}
		s := demoSteps[slices.IndexFunc(demoSteps, func(s demoStep) bool { return strings.Contains(l, " "+s.name+" ") })]
		at := strings.Index(l, s.name) + len(s.name)
		at += len(l[at:]) - len(strings.TrimLeft(l[at:], " "))
		if col >= 0 && at != col {
			t.Fatalf("details start at column %d and %d:\n%s", col, at, r.stdout)
		}
		col = at
	}
}

// A step name longer than the others' widens the column rather than
// pushing its line out of it.
func TestDemoStepColumns(t *testing.T) {
	t.Parallel()
	saved := demoSteps
	defer func() { demoSteps = saved }()
	demoSteps = []demoStep{{recipe: "lock", name: "short"}, {recipe: "rendezvous", name: "a step name longer than all the others"}}
	a, b := stepColumns(demoSteps[0]), stepColumns(demoSteps[1])
	if len(a) != len(b) || !strings.HasPrefix(a, "lock       short ") {
		t.Fatalf("columns %q and %q", a, b)
	}
}

// Against an external server, the steps that need the embedded server's
// hooks are skipped and the table says so.
func TestDemoExternal(t *testing.T) {
	t.Parallel()
	servers, _, _ := env(t)
	r := zkit(t, "demo", "--servers", servers, "--workers", "2", "--rounds", "3")
	if r.status != 0 {
		t.Fatalf("status %d\n%s%s", r.status, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "skipped: needs the embedded server") {
		t.Fatalf("no skipped step in:\n%s", r.stdout)
	}
}

func TestDemoRejectsBadFlags(t *testing.T) {
	t.Parallel()
	if r := zkit(t, "demo", "--workers", "1"); r.status != exitUsage {
		t.Fatalf("one worker cannot contend: status %d, want %d", r.status, exitUsage)
	}
}

// A demo stopped by a signal stops there: the step it was in is reported
// stopped, no step after it runs (each would only fail on the ended
// context), and the command ends with the context's error, so that zkit
// exits with the signal's status.
func TestDemoStopsAtSignal(t *testing.T) {
	t.Parallel()
	var out, errb syncBuffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&stopError{syscall.SIGINT})
	err := a.demo(ctx, 2, 1)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("demo returned %v, want the context's error", err)
	}
	if strings.Contains(out.String(), "FAIL") || strings.Count(out.String(), "stopped") != 2 {
		t.Fatalf("want one step stopped (its line and its row) and none failed:\n%s", out.String())
	}
	for _, s := range demoSteps[1:] {
		if strings.Contains(out.String(), s.name) {
			t.Fatalf("step %q ran after the stop:\n%s", s.name, out.String())
		}
	}
}

// The lock expiry step's "stale fenced write refused" is the server's
// refusal: the expired holder's write goes to the server, behind its
// guard, rather than being turned away in-process by a lease that knows it
// ended (which says nothing about the fence).
func TestDemoLockExpiryStaleWriteReachesServer(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	d := &demoEnv{srv: srv, servers: srv.Servers(), root: "/zkit-demo", workers: 2, rounds: 1}
	// The first holder's node is the first sequential node on a fresh
	// server: a multi behind its guard, sent after it expired, starts
	// with that path.
	var zombie atomic.Int32
	srv.DropReplyAfterCommit(func(op, path string) bool {
		if op == "multi" && strings.HasPrefix(path, d.path("expiry")+"/") && strings.HasSuffix(path, "-lock-0000000000") {
			zombie.Add(1)
		}
		return false // observe only
	})
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
	defer cancel()
	detail, err := lockExpiry(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if zombie.Load() == 0 {
		t.Fatalf("the expired holder's fenced write never reached the server, yet the step says %q", detail)
	}
}

// With nothing listening at --servers, the demo says so within
// --connect-timeout and exits with the unreachable status, as every
// command does, instead of waiting out each step's deadline in turn.
func TestDemoUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	done := make(chan result, 1)
	go func() { done <- zkit(t, "demo", "--servers", addr, "--connect-timeout", "500ms") }()
	select {
	case r := <-done:
		if r.status != exitUnreachable {
			t.Fatalf("status %d, want %d (%q)", r.status, exitUnreachable, r.stderr)
		}
		oneErrorLine(t, r, "zkit demo: ", "no ZooKeeper reachable at "+addr+" within 500ms")
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatal("zkit demo against an unreachable --servers still running after 20s")
	}
}

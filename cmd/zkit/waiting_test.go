//go:build linux

package main

import (
	"context"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// On a terminal, a command that waits its turn says once what it waits
// for.
func TestWaitingSaysWhatItWaitsFor(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers, c := b.Addr(), b.Connect(t)
		ctx := t.Context()
		for _, tc := range []struct {
			name string
			args func(path string) []string
			hold func(path string) (say string, release func() error)
		}{
			{"lock", func(p string) []string { return []string{"lock", p} }, func(p string) (string, func() error) {
				l, err := lock.New(c, p).Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return "zkit lock: waiting for " + p + ": 2nd in line, behind " + l.Node(), func() error { return l.Unlock(ctx) }
			}},
			{"elect", func(p string) []string { return []string{"elect", p} }, func(p string) (string, func() error) {
				term, err := election.New(c, p, "a").Campaign(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return "zkit elect: waiting for leadership of " + p + ": 2nd in line, behind " + term.Node(), func() error { return term.Resign(ctx) }
			}},
			{"semaphore", func(p string) []string { return []string{"semaphore", p, "--max", "1"} }, func(p string) (string, func() error) {
				l, err := semaphore.New(c, p, 1).Acquire(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return "zkit semaphore: waiting for one of the 1 leases of " + p + ": 1 held", func() error { return l.Unlock(ctx) }
			}},
			{"barrier", func(p string) []string { return []string{"barrier", p, "--count", "2"} }, func(p string) (string, func() error) {
				return "zkit barrier: waiting at barrier " + p + ": 1 of 2 members in", func() error {
					d := barrier.NewDouble(c, p, 2)
					if err := d.Enter(ctx); err != nil {
						return err
					}
					return d.Leave(ctx)
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				path := zktest.UniquePath(t)
				say, release := tc.hold(path)
				_, tty, shown := openPTY(t)
				done := make(chan int, 1)
				args := append(tc.args(path), "--servers", servers, "--", "true")
				go func() { done <- execute(args, strings.NewReader(""), io.Discard, tty) }()
				waitOutput(t, shown, say)
				released := make(chan error, 1)
				go func() { released <- release() }()
				if status := <-done; status != exitOK {
					t.Fatalf("status %d on a terminal: %q", status, shown.String())
				}
				if err := <-released; err != nil {
					t.Fatal(err)
				}
				if n := strings.Count(shown.String(), "waiting"); n != 1 {
					t.Fatalf("said %d times: %q", n, shown.String())
				}
			})
		}
	})
}

// Off a terminal (a script's stderr) nothing is said, nor even looked up.
func TestWaitingSaysNothingOffTerminal(t *testing.T) {
	t.Parallel()
	var stderr syncBuffer
	a := &app{stderr: &stderr}
	asked := false
	stop := a.sayWaiting(t.Context(), "lock", func(context.Context) string { asked = true; return "waiting" })
	stop()
	if asked || stderr.String() != "" {
		t.Fatalf("asked %v, said %q", asked, stderr.String())
	}
}

// isTerminal tells a terminal from a pipe and from /dev/null.
func TestIsTerminal(t *testing.T) {
	t.Parallel()
	_, tty, _ := openPTY(t)
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if !isTerminal(tty) || isTerminal(null) || isTerminal(&syncBuffer{}) {
		t.Fatalf("isTerminal: tty %v, /dev/null %v", isTerminal(tty), isTerminal(null))
	}
}

// -v logs the client's session events, and serve -v the server's
// connections and sessions.
func TestVerboseLogsSessionEvents(t *testing.T) {
	t.Parallel()
	servers, _, _ := env(t)
	r := zkitOn(t, servers, exitOK, "-v", "counter", "/v", "get")
	if !strings.Contains(r.stderr, "session established") || r.stdout != "0\n" {
		t.Fatalf("-v: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if r := zkitOn(t, servers, exitOK, "counter", "/v", "get"); r.stderr != "" {
		t.Fatalf("without -v: stderr %q", r.stderr)
	}

	p := start(t, buildZkit(t), "serve", "-v", "--listen", "127.0.0.1:0")
	addr := strings.TrimPrefix(p.line(t), "zkit reference server listening on ")
	zkitOn(t, addr, exitOK, "counter", "/v", "get")
	for _, want := range []string{"connection accepted", "session established", "session closed", "connection closed"} {
		waitOutput(t, p.stderr, want)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if status := p.wait(t); status != exitOK {
		t.Fatalf("serve: status %d after SIGTERM", status)
	}
}

// The place a waiter is told is its place in queue order, the lock's own
// (recipes.SortNodes): a node of a wrapped counter ("-2147483648") was
// created after every other, and names of other shapes are no places in
// line.
func TestQueuePlaceInQueueOrder(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := t.Context()
		admin, c := b.Connect(t), b.Connect(t)
		dir := zktest.UniquePath(t)
		if err := admin.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		wrapped := dir + "/_c_0f8b2f0e-7a2c-4d2e-9c1e-3b1c2d3e4f50-lock--2147483648"
		holder := dir + "/_c_2f8b2f0e-7a2c-4d2e-9c1e-3b1c2d3e4f50-lock-0000000001"
		for _, p := range []string{wrapped, holder, dir + "/readme"} {
			if _, err := admin.Create(ctx, p, nil, client.Ephemeral); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Create(ctx, dir+"/_c_1f8b2f0e-7a2c-4d2e-9c1e-3b1c2d3e4f50-lock-0000000003", nil, client.Ephemeral); err != nil {
			t.Fatal(err)
		}
		want := "waiting for " + dir + ": 2nd in line, behind " + holder
		if got := queuePlace(c, dir, dir, recipes.MutexKind)(ctx); got != want {
			t.Fatalf("queuePlace = %q, want %q", got, want)
		}
	})
}

//go:build unix

package main

import (
	"context"
	"os/exec"
	"syscall"
	"testing"

	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
)

// A command stopped by SIGINT or SIGTERM while it waits (no CMD started
// yet) exits 128+N, says so in one line, and leaves no node behind.
// --exit-base does not move these statuses.
func TestWaiterStoppedExitsWithSignalStatus(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			for _, cmd := range []string{"lock", "elect", "barrier"} {
				t.Run(cmd+"_"+signalName(sig), func(t *testing.T) {
					path := zktest.UniquePath(t)
					var args []string
					switch cmd {
					case "lock":
						held, err := lock.New(c, path).Lock(t.Context())
						if err != nil {
							t.Fatal(err)
						}
						defer held.Unlock(context.Background())
						args = []string{"lock", path}
					case "elect":
						term, err := election.New(c, path, "leader").Campaign(t.Context())
						if err != nil {
							t.Fatal(err)
						}
						defer term.Resign(context.Background())
						args = []string{"elect", path}
					case "barrier":
						args = []string{"barrier", path, "--count", "2"} // nobody else comes
					}
					z := startZkit(t, bin, t.TempDir(), b.Servers, append(args, "--exit-base", "100", "--", "true")...)
					if cmd == "barrier" {
						waitNodes(t, c, path, 1)
					} else {
						waitNodes(t, c, path, 2)
					}
					z.cmd.Process.Signal(sig)
					if status := z.status(t); status != 128+int(sig) {
						t.Fatalf("zkit %s exited %d, want %d (stderr %q)", cmd, status, 128+int(sig), z.stderr.String())
					}
					oneErrorLine(t, result{stderr: z.stderr.String()}, "zkit "+cmd+": stopped by "+signalName(sig))
					want := 1
					if cmd == "barrier" {
						want = 0
					}
					waitNodes(t, c, path, want)
				})
			}
		}
	})
}

// zkit started with SIGHUP ignored (under nohup) leaves it ignored: a
// waiting lock sent SIGHUP and then SIGTERM exits with SIGTERM's status. A
// caught SIGHUP, sent first, would have counted (129).
func TestSignalIgnoredAtStartStaysIgnored(t *testing.T) {
	t.Parallel()
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Fatalf("nohup (coreutils): %v", err)
	}
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		path := heldPath(t, c)
		z := startZkit(t, nohup, t.TempDir(), b.Servers, bin, "lock", path, "--", "true")
		waitNodes(t, c, path, 2)
		z.cmd.Process.Signal(syscall.SIGHUP)
		z.cmd.Process.Signal(syscall.SIGTERM)
		if status := z.status(t); status != 128+int(syscall.SIGTERM) {
			t.Fatalf("zkit under nohup exited %d after SIGHUP and SIGTERM, want %d (stderr %q)",
				status, 128+int(syscall.SIGTERM), z.stderr.String())
		}
		waitNodes(t, c, path, 1)
	})
}

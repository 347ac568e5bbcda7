package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/rendezvous"
	"github.com/zkit-dev/zkit/zktest"
)

// The paper's rendezvous from the shell: a worker waiting before the
// master gets the address; the master's CMD ends when the launcher does.
func TestRendezvousCommands(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, c, ctx := env(t)
	worker := make(chan result, 1)
	go func() { worker <- zkit(t, "rendezvous", "/jobs/1/zr", "wait", "--servers", servers) }()
	launcher, _, stopLauncher := background(t, bin, "rendezvous", "/jobs/1/zr", "create", "--servers", servers)
	waitOutput(t, launcher, "/jobs/1/zr\n")
	// A second launcher is refused, saying so with the path once.
	if r := zkit(t, "rendezvous", "/jobs/1/zr", "create", "--servers", servers); r.status != exitFailed {
		t.Fatalf("second create: %+v", r)
	} else {
		oneErrorLine(t, r, "zkit rendezvous: ", "/jobs/1/zr", "owned by another session")
		if n := strings.Count(r.stderr, "/jobs/1/zr"); n != 1 {
			t.Fatalf("second create: stderr %q names the path %d times", r.stderr, n)
		}
	}
	master := make(chan result, 1)
	go func() {
		master <- zkit(t, "rendezvous", "/jobs/1/zr", "publish", "10.0.0.7:7000", "--servers", servers, "--", "sleep", "60")
	}()
	if r := <-worker; r.status != 0 || r.stdout != "10.0.0.7:7000\n" {
		t.Fatalf("worker: %+v", r)
	}
	if status := stopLauncher(); status != 0 {
		t.Fatalf("launcher stopped with %d", status)
	}
	r := <-master
	if r.status != exitLost {
		t.Fatalf("master after the launcher ended: %+v", r)
	}
	oneErrorLine(t, r, "zkit rendezvous: ", "/jobs/1/zr", "launcher ended")
	if r := zkit(t, "rendezvous", "/jobs/1/zr", "publish", "x", "--servers", servers); r.status != exitFailed {
		t.Fatalf("publish without a launcher: %+v", r)
	} else {
		oneErrorLine(t, r, "does not exist", "--own")
	}
	if r := zkit(t, "rendezvous", "/jobs/1/zr", "wait", "--wait", "100ms", "--servers", servers); r.status != exitTimeout {
		t.Fatalf("wait with nothing to wait for: %+v", r)
	}

	// The launcher with CMD deletes zr when CMD ends; --own publishes
	// without a launcher.
	if r := zkit(t, "rendezvous", "/jobs/2/zr", "create", "--servers", servers, "--", "sh", "-c", `test "$ZKIT_RENDEZVOUS" = /jobs/2/zr`); r.status != 0 {
		t.Fatalf("create -- CMD: %+v", r)
	}
	if ok, _, err := c.Exists(ctx, "/jobs/2/zr"); err != nil || ok {
		t.Fatalf("zr left after the launcher's CMD (err %v)", err)
	}
	own := make(chan result, 1)
	running := filepath.Join(t.TempDir(), "running")
	go func() {
		own <- zkit(t, "rendezvous", "/svc/master", "publish", "m:1", "--own", "--servers", servers, "--",
			"sh", "-c", "touch "+running+"; exec sleep 60")
	}()
	data, err := rendezvous.New(c, "/svc/master").Wait(ctx)
	if err != nil || string(data) != "m:1" {
		t.Fatalf("Wait on --own: %q, %v", data, err)
	}
	waitFile(t, running)
	if err := c.Delete(ctx, "/svc/master", -1); err != nil {
		t.Fatal(err)
	}
	// Deleted by someone: the publication ends its presence, CMD gets
	// SIGTERM.
	if r := <-own; r.status != exitLost {
		t.Fatalf("--own after zr was deleted: %+v", r)
	}
}

func TestRendezvousUsage(t *testing.T) {
	t.Parallel()
	expectUsage(t, "zkit rendezvous: ", [][]string{
		{"rendezvous"},
		{"rendezvous", "/zr"},
		{"rendezvous", "/", "create"},
		{"rendezvous", "relative", "wait"},
		{"rendezvous", "/zr", "publish"},
		{"rendezvous", "/zr", "publish", ""},
		{"rendezvous", "/zr", "create", "--own"},
		{"rendezvous", "/zr", "wait", "--", "true"},
		{"rendezvous", "/zr", "wait", "--wait", "-1s"},
		{"rendezvous", "/zr", "frob"},
	})
}

// publish --own without CMD prints zr and keeps it published until stopped; when
// another process writes zr, publishing ends for good (zkit deletes its
// node, leaving the name to the other): zkit says so and exits 5 rather
// than staying, silent, publishing nothing.
func TestRendezvousPublishOwnEndsOnConflict(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, c, ctx := env(t)
	p := start(t, bin, "rendezvous", "/svc/own", "publish", "m:1", "--own", "--servers", servers)
	if line := p.line(t); line != "/svc/own" {
		t.Fatalf("publish --own printed %q, want zr", line)
	}
	if data, _, err := c.Get(ctx, "/svc/own"); err != nil || string(data) != "m:1" {
		t.Fatalf("zr holds %q, %v", data, err)
	}
	if _, err := c.Set(ctx, "/svc/own", []byte("other:2"), -1); err != nil {
		t.Fatal(err)
	}
	if status := p.wait(t); status != exitLost {
		t.Fatalf("publish --own after another process wrote zr: status %d, want %d (stderr %q)", status, exitLost, p.stderr.String())
	}
	if got := p.stderr.String(); !strings.Contains(got, "zkit rendezvous: ") || !strings.Contains(got, "/svc/own") {
		t.Fatalf("stderr %q does not say why", got)
	}
}

// A worker started before the launcher, in a job's namespace that does not
// exist yet, waits for it as for zr (it creates nothing), and gets the
// address once the launcher and the master have run.
func TestRendezvousWaitInMissingNamespace(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		parent := zktest.UniquePath(t)
		job := b.Addr() + parent + "/job"
		if r := zkit(t, "rendezvous", "/zr", "wait", "--wait", "300ms", "--servers", job); r.status != exitTimeout {
			t.Fatalf("wait in a missing namespace: %+v, want status %d", r, exitTimeout)
		}
		if ok, _, err := c.Exists(t.Context(), parent); err != nil || ok {
			t.Fatalf("after the wait, %s exists: %v (%v)", parent, ok, err)
		}
		worker := make(chan result, 1)
		go func() { worker <- zkit(t, "rendezvous", "/zr", "wait", "--wait", "60s", "--servers", job) }()
		launcher, _, stopLauncher := background(t, bin, "rendezvous", "/zr", "create", "--servers", job)
		waitOutput(t, launcher, "/zr\n")
		master := make(chan result, 1)
		go func() {
			master <- zkit(t, "rendezvous", "/zr", "publish", "10.0.0.8:7000", "--servers", job, "--", "sleep", "60")
		}()
		if r := <-worker; r.status != 0 || r.stdout != "10.0.0.8:7000\n" {
			t.Fatalf("worker: %+v", r)
		}
		if status := stopLauncher(); status != 0 {
			t.Fatalf("launcher stopped with %d", status)
		}
		if r := <-master; r.status != exitLost {
			t.Fatalf("master after the launcher ended: %+v", r)
		}
	})
}

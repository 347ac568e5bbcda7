package main

import (
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/zkit-dev/zkit/zktest"
)

// A connect string's chroot (host:port/app) roots every path at /app, as
// with ZooKeeper's own clients, and is created when missing.
func TestConnectStringChroot(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		root := zktest.UniquePath(t) + "/app"
		servers := b.Addr() + root
		zkitOn(t, servers, exitOK, "create", "/x", "data", "--connect-timeout", "20s")
		if d, _, err := c.Get(t.Context(), root+"/x"); err != nil || string(d) != "data" {
			t.Fatalf("%s/x: %q, %v", root, d, err)
		}
		if r := zkitOn(t, servers, exitOK, "ls", "/"); r.stdout != "x\n" {
			t.Fatalf("ls / in the chroot printed %q", r.stdout)
		}
		zkitOn(t, servers, exitOK, "lock", "/locks/a", "--", "true")
		if r := zkitOn(t, servers, exitOK, "counter", "/n", "add", "2"); r.stdout != "2\n" {
			t.Fatalf("counter in the chroot printed %q", r.stdout)
		}
		if ok, _, err := c.Exists(t.Context(), root+"/n"); !ok || err != nil {
			t.Fatalf("%s/n: %v, %v", root, ok, err)
		}
		t.Setenv("ZKIT_SERVERS", servers)
		if r := zkit(t, "get", "/x"); r.status != exitOK || r.stdout != "data\n" {
			t.Fatalf("ZKIT_SERVERS with a chroot: %+v", r)
		}
	})
	for _, bad := range []string{"127.0.0.1:2181/app/", "127.0.0.1:2181/a//b"} {
		if r := zkit(t, "get", "/x", "--servers", bad); r.status != exitUsage {
			t.Errorf("--servers %q: status %d, want %d (%q)", bad, r.status, exitUsage, r.stderr)
		}
	}
}

// --namespace (and $ZKIT_NAMESPACE) does what a chroot does; both at once
// is a usage error.
func TestNamespaceFlag(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		root := zktest.UniquePath(t) + "/app"
		zkitOn(t, b.Addr(), exitOK, "create", "/x", "data", "--namespace", root)
		if d, _, err := c.Get(t.Context(), root+"/x"); err != nil || string(d) != "data" {
			t.Fatalf("%s/x: %q, %v", root, d, err)
		}
		// A chroot of "/" is no chroot: it does not clash with --namespace.
		if r := zkitOn(t, b.Addr()+"/", exitOK, "get", "/x", "--namespace", root); r.stdout != "data\n" {
			t.Fatalf("get /x with --servers HOST:PORT/ and --namespace printed %q", r.stdout)
		}
		t.Setenv("ZKIT_NAMESPACE", root)
		if r := zkitOn(t, b.Addr(), exitOK, "ls", "/"); r.stdout != "x\n" {
			t.Fatalf("ls / with $ZKIT_NAMESPACE printed %q", r.stdout)
		}
	})
	if r := zkit(t, "get", "/x", "--servers", "127.0.0.1:2181/a", "--namespace", "/b"); r.status != exitUsage {
		t.Errorf("a chroot and --namespace: status %d, want %d (%q)", r.status, exitUsage, r.stderr)
	}
	if r := zkit(t, "get", "/x", "--namespace", "relative"); r.status != exitUsage {
		t.Errorf("--namespace relative: status %d, want %d (%q)", r.status, exitUsage, r.stderr)
	}
}

// A command that only reads creates no namespace: it fails, saying the
// namespace is missing, and leaves the server as it was. A command that
// writes creates it, as before, and the readers then work in it. (A worker
// waiting for a rendezvous and the commands that watch until stopped wait
// for the namespace instead: TestRendezvousWaitInMissingNamespace,
// TestWatchersWaitForMissingNamespace.)
func TestReadersCreateNoNamespace(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		parent := zktest.UniquePath(t)
		root := parent + "/app"
		readers := [][]string{
			{"ls", "/"},
			{"get", "/x"},
			{"stat", "/x"},
			{"getacl", "/x"},
			{"inspect", "/x"},
			{"counter", "/n", "get"},
			{"elect", "/e", "--leader"},
			{"elect", "/e", "--participants"},
			{"members", "/g", "list"},
			{"discover", "/s", "list"},
			{"config", "/cfg", "get"},
		}
		for _, args := range readers {
			for _, ns := range [][]string{{"--servers", b.Addr() + root}, {"--servers", b.Addr(), "--namespace", root}} {
				r := zkit(t, append(append(ns, "--connect-timeout", "20s"), args...)...)
				if r.status != exitFailed {
					t.Fatalf("zkit %q %q: status %d, want %d (stdout %q, stderr %q)", ns, args, r.status, exitFailed, r.stdout, r.stderr)
				}
				oneErrorLine(t, r, "namespace "+root, "does not exist")
			}
		}
		if ok, _, err := c.Exists(t.Context(), parent); err != nil || ok {
			t.Fatalf("after the readers, %s exists: %v (%v)", parent, ok, err)
		}
		zkitOn(t, b.Addr()+root, exitOK, "counter", "/n", "add", "3")
		if r := zkitOn(t, b.Addr()+root, exitOK, "counter", "/n", "get"); r.stdout != "3\n" {
			t.Fatalf("counter get in the namespace the writer created printed %q", r.stdout)
		}
		if r := zkitOn(t, b.Addr(), exitOK, "ls", "/", "--namespace", root); r.stdout != "n\n" {
			t.Fatalf("ls / in the namespace printed %q", r.stdout)
		}
	})
}

// A command that watches until stopped waits in a missing namespace as it
// waits for a missing node without one: it creates nothing (not the
// namespace, not its own node), prints what a writer then creates there,
// and exits 0 on SIGTERM.
func TestWatchersWaitForMissingNamespace(t *testing.T) {
	bin := buildZkit(t)
	watchers := []struct {
		name    string
		args    []string // the watcher's command
		waiting string   // what it prints while there is nothing to see ("" for nothing)
		writer  []string // the command that then creates what it waits for
		holds   bool     // the writer runs until stopped
		want    string   // what the watcher prints then
	}{
		{"watch", []string{"watch", "/w"}, "initialized zxid=", []string{"create", "/w", "hello"}, false, `created /w version=0 `},
		{"elect", []string{"elect", "/e", "--observe"}, "none\n", []string{"elect", "/e", "--id", "boss"}, true, "boss /e/"},
		{"members", []string{"members", "/g", "watch"}, "[]\n", []string{"members", "/g", "join", "m1"}, true, `[{"id":"m1",`},
		{"discover", []string{"discover", "/s", "watch", "api"}, "[]\n", []string{"discover", "/s", "register", "api", "i1", "--address", "10.0.0.1"}, true, `"id":"i1"`},
		{"config", []string{"config", "/cfg", "watch"}, "", []string{"config", "/cfg", "set", "a=1"}, false, `{"a":1}` + "\n"},
	}
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		for i, w := range watchers {
			t.Run(w.name, func(t *testing.T) {
				parent := zktest.UniquePath(t)
				root := parent + "/app"
				ns := []string{"--servers", b.Addr() + root}
				if i%2 == 1 {
					ns = []string{"--servers", b.Addr(), "--namespace", root}
				}
				p := start(t, bin, append(w.args, ns...)...)
				p.waitFor(t, "print "+strconv.Quote(w.waiting)+" and watch in "+root, func() bool {
					out, err := zktest.FourLetterWord(t.Context(), b.Addr(), "wchp")
					return strings.Contains(p.stdout.String(), w.waiting) && err == nil && strings.Contains(out, root)
				})
				if ok, _, err := c.Exists(t.Context(), parent); err != nil || ok {
					t.Fatalf("while zkit %q waits, %s exists: %v (%v)", w.args, parent, ok, err)
				}
				if w.holds {
					_, _, stop := background(t, bin, append(w.writer, ns...)...)
					defer func() {
						if status := stop(); status != exitOK {
							t.Errorf("zkit %q stopped with status %d", w.writer, status)
						}
					}()
				} else {
					if r := zkit(t, append(w.writer, ns...)...); r.status != exitOK {
						t.Fatalf("zkit %q: %+v", w.writer, r)
					}
				}
				p.waitFor(t, "print "+strconv.Quote(w.want), func() bool { return strings.Contains(p.stdout.String(), w.want) })
				p.cmd.Process.Signal(syscall.SIGTERM)
				if status := p.wait(t); status != exitOK {
					t.Fatalf("zkit %q stopped with status %d, want %d (stderr %q)", w.args, status, exitOK, p.stderr.String())
				}
			})
		}
	})
}

package main

import (
	"context"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// create -s appends the sequence number and prints the node created;
// create -e keeps its ephemeral node until stopped, and exits 5 when the
// node is gone meanwhile; on both servers.
func TestCreateSequentialAndEphemeral(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers, c := b.Addr(), b.Connect(t)
		ctx := t.Context()
		dir := zktest.UniquePath(t)
		run := func(want int, args ...string) result { t.Helper(); return zkitOn(t, servers, want, args...) }

		if r := run(exitOK, "create", dir+"/job-", "first", "-s", "--parents"); r.stdout != dir+"/job-0000000000\n" {
			t.Fatalf("create -s printed %q", r.stdout)
		}
		if r := run(exitOK, "create", dir+"/", "-s", "-o", "json"); r.stdout != `{"path":"`+dir+`/0000000001"}`+"\n" {
			t.Fatalf("create -s of DIR/ printed %q", r.stdout)
		}
		if d, st, err := c.Get(ctx, dir+"/job-0000000000"); err != nil || string(d) != "first" || st.EphemeralOwner != 0 {
			t.Fatalf("sequential node: %q %+v %v", d, st, err)
		}

		for _, tc := range []struct {
			args []string
			node string
		}{
			{[]string{"create", dir + "/e", "held", "-e"}, dir + "/e"},
			{[]string{"create", dir + "/es-", "-e", "-s"}, dir + "/es-0000000003"},
		} {
			p := start(t, bin, append(tc.args, "--servers", servers)...)
			p.waitFor(t, "print "+tc.node, func() bool { return p.stdout.String() == tc.node+"\n" })
			if _, st, err := c.Get(ctx, tc.node); err != nil || st.EphemeralOwner == 0 {
				t.Fatalf("%s: %+v, %v; want an ephemeral node", tc.node, st, err)
			}
			p.cmd.Process.Signal(syscall.SIGTERM)
			if status := p.wait(t); status != exitOK {
				t.Fatalf("zkit %q: status %d after SIGTERM (%q)", tc.args, status, p.stderr.String())
			}
			if ok, _, err := c.Exists(ctx, tc.node); ok || err != nil {
				t.Fatalf("%s outlived zkit (%v)", tc.node, err)
			}
		}

		p := start(t, bin, "create", dir+"/gone", "-e", "--servers", servers)
		p.waitFor(t, "create it", func() bool { return p.stdout.String() != "" })
		if err := c.Delete(ctx, dir+"/gone", -1); err != nil {
			t.Fatal(err)
		}
		if status := p.wait(t); status != exitLost || !strings.Contains(p.stderr.String(), "ephemeral node "+dir+"/gone gone: the node was deleted") {
			t.Fatalf("status %d (%q), want %d saying the node was deleted", status, p.stderr.String(), exitLost)
		}
	})
}

// --ttl and --container make the nodes the servers delete by themselves:
// a TTL node unchanged and childless for its TTL, a container once its
// last child is gone.
func TestCreateTTLAndContainer(t *testing.T) {
	t.Parallel()
	zk := []zktest.Option{zktest.WithJVMArgs("-Dzookeeper.extendedTypesEnabled=true"), zktest.WithContainerCheckInterval(100 * time.Millisecond)}
	ref := []zktest.ServerOption{zktest.ServerContainerCheckInterval(100 * time.Millisecond)}
	zktest.EachBackendWith(t, zk, ref, func(t *testing.T, b zktest.Backend) {
		servers, c := b.Addr(), b.Connect(t)
		ctx := t.Context()
		run := func(want int, args ...string) result { t.Helper(); return zkitOn(t, servers, want, args...) }
		seq := strings.TrimSuffix(run(exitOK, "create", "/ttl-", "--ttl", "1h", "-s").stdout, "\n")
		if !regexp.MustCompile(`^/ttl-\d{10}$`).MatchString(seq) {
			t.Fatalf("create --ttl -s printed %q", seq)
		}
		run(exitOK, "create", "/box", "--container")
		run(exitOK, "create", "/box/item")
		// Long enough to be seen on a loaded machine (a zkit process
		// starts in between), short enough to wait for.
		run(exitOK, "create", "/ttl", "x", "--ttl", "3s")
		if ok, _, err := c.Exists(ctx, "/ttl"); !ok || err != nil {
			t.Fatalf("the TTL node is not there at first (%v)", err)
		}
		run(exitOK, "delete", "/box/item")
		waitNodeGone(t, c, "/ttl")
		waitNodeGone(t, c, "/box")
		if ok, _, err := c.Exists(ctx, seq); !ok || err != nil {
			t.Fatalf("the node of TTL 1h is gone (%v)", err)
		}
	})
}

// A server that does not take TTL nodes (ZooKeeper without
// extendedTypesEnabled) gets a failure that says what it needs.
func TestCreateTTLRefused(t *testing.T) {
	t.Parallel()
	for _, b := range []zktest.Backend{zktest.RealBackend(t), zktest.ReferenceBackend(t, zktest.ServerWithoutTTL())} {
		r := zkitOn(t, b.Addr(), exitFailed, "create", zktest.UniquePath(t), "--ttl", "1m")
		oneErrorLine(t, r, "the servers do not take TTL nodes", "zookeeper.extendedTypesEnabled=true")
	}
}

func TestCreateUsage(t *testing.T) {
	t.Parallel()
	expectUsage(t, "zkit create: ", [][]string{
		{"create", "/x", "--container", "-e"},
		{"create", "/x", "--container", "-s"},
		{"create", "/x", "--container", "--ttl", "1m"},
		{"create", "/x", "-e", "--ttl", "1m"},
		{"create", "/x", "--ttl", "-1s"},
		{"create", "/x", "--ttl", "1us"},
		{"create", "/x/"}, // only a sequential node's path may end with /
		{"create", "/", "-s"},
	})
}

// waitNodeGone waits until the server has deleted path.
func waitNodeGone(t *testing.T, c *client.Client, path string) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(20 * time.Second))
	for {
		ok, _, err := c.Exists(context.Background(), path)
		if err == nil && !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still there (%v)", path, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

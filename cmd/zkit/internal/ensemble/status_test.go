package ensemble_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/ensemble"
	"github.com/zkit-dev/zkit/zktest"
)

func queryCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), zktest.Scale(10*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// A serving server's status: its mode, its last zxid (a write's), its
// connections (a client's and the status's own), its watches (three more
// once a client sets three), no requests outstanding, its latency and its
// version, on both servers.
func TestQuery(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := queryCtx(t)
		c := b.Connect(t)
		dir := zktest.UniquePath(t)
		if err := c.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"/a", "/b"} {
			if _, err := c.Create(ctx, dir+name, nil, client.Persistent); err != nil {
				t.Fatal(err)
			}
		}
		written := c.LastZxid()
		before := ensemble.Query(ctx, b.Addr(), ensemble.Options{})
		if before.Stats == nil || before.Watches == nil {
			t.Fatalf("status %+v: no figures", before)
		}
		for _, p := range []string{dir + "/a", dir + "/b"} {
			if _, _, _, err := c.GetW(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, _, err := c.ChildrenW(ctx, dir); err != nil {
			t.Fatal(err)
		}
		s := ensemble.Query(ctx, b.Addr(), ensemble.Options{})
		switch {
		case s.Addr != b.Addr() || s.Mode != "standalone" || !s.Serving() || s.Error != "":
			t.Fatalf("status %+v", s)
		case s.Zxid < written:
			t.Errorf("zxid %#x, before the client's last write %#x", s.Zxid, written)
		case s.Connections < 2:
			t.Errorf("%d connections: the client's and the status's own are 2", s.Connections)
		case s.Outstanding != 0:
			t.Errorf("%d requests outstanding on an idle server", s.Outstanding)
		case s.Watches == nil || *s.Watches != *before.Watches+3:
			t.Errorf("watches %v, want %d", s.Watches, *before.Watches+3)
		case !strings.HasPrefix(s.Version, "3.8.") || strings.Contains(s.Version, "built on"):
			t.Errorf("version %q", s.Version)
		case s.Latency.Min > s.Latency.Avg || s.Latency.Avg > s.Latency.Max:
			t.Errorf("latency %v", s.Latency)
		}
	})
}

// A server that does not answer is down, and says why; one that serves
// among servers that do not is a quorum that answers.
func TestStatusWithServerDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	ref := zktest.ReferenceBackend(t)
	r := ensemble.Status(queryCtx(t), []string{closed, ref.Addr()}, ensemble.Options{})
	if down := r.Servers[0]; down.Addr != closed || down.Mode != ensemble.Down || down.Serving() || down.Stats != nil || !strings.Contains(down.Error, "refused") {
		t.Errorf("a closed port: %+v", down)
	}
	if !r.Quorum || r.Answered() != 1 || r.Servers[1].Mode != "standalone" {
		t.Errorf("report %+v: want a quorum, one server answering", r)
	}
	if r := ensemble.Status(queryCtx(t), []string{closed}, ensemble.Options{}); r.Quorum || r.Answered() != 0 {
		t.Errorf("report of a closed port %+v", r)
	}
}

// Where mntr is not whitelisted (ZooKeeper's default whitelist is srvr
// alone), the watches come from the admin server's mntr; where that does
// not answer either, they are unknown and the status says why, the rest
// of the figures intact.
func TestQueryAdminServer(t *testing.T) {
	z := zktest.StartZooKeeper(t, zktest.WithAdminServer(), zktest.WithConfig("4lw.commands.whitelist", "srvr"))
	ctx := queryCtx(t)
	c := zktest.Backend{Servers: z.Servers()}.Connect(t)
	if _, _, _, err := c.ExistsW(ctx, "/nothing"); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(z.AdminServers()[0])
	admin, _ := strconv.Atoi(port)
	s := ensemble.Query(ctx, z.Servers()[0], ensemble.Options{AdminPort: admin})
	if s.Mode != "standalone" || s.Stats == nil || s.Watches == nil || *s.Watches != 1 || s.Error != "" {
		t.Fatalf("status through the admin server: %+v (stats %+v)", s, s.Stats)
	}
	for _, opts := range []ensemble.Options{{}, {AdminPort: admin + 1}} {
		s := ensemble.Query(ctx, z.Servers()[0], opts)
		if s.Mode != "standalone" || s.Stats == nil || s.Watches != nil || !strings.Contains(s.Error, "4lw.commands.whitelist") {
			t.Errorf("admin port %d: status %+v", opts.AdminPort, s)
		}
	}
}

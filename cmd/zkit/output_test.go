package main

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/zktest"
)

// Every command that prints data prints one JSON object a line with -o
// json, and text with payloads escaped otherwise.
func TestOutputJSONAndEscapedText(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers, c := b.Addr(), b.Connect(t)
		ctx := t.Context()
		root := zktest.UniquePath(t)
		run := func(args ...string) string { t.Helper(); return zkitOn(t, servers, exitOK, args...).stdout }

		if out := run("counter", root+"/n", "add", "3", "-o", "json"); out != `{"path":"`+root+`/n","value":3}`+"\n" {
			t.Fatalf("counter -o json printed %q", out)
		}

		group := root + "/group"
		m, err := membership.New(c, group).Join(ctx, "a", []byte("tab\there\nnewline"))
		if err != nil {
			t.Fatal(err)
		}
		defer m.Leave(ctx)
		if out := run("members", group, "list"); out != "a\t\"tab\\there\\nnewline\"\n" {
			t.Fatalf("members list printed %q", out)
		}
		if out := run("members", group, "list", "-o", "json"); out != `[{"id":"a","data":"tab\there\nnewline"}]`+"\n" {
			t.Fatalf("members list -o json printed %q", out)
		}

		zr := root + "/zr"
		if _, err := c.Create(ctx, zr, []byte("10.0.0.7:7000\n"), client.Persistent); err != nil {
			t.Fatal(err)
		}
		if out := run("rendezvous", zr, "wait"); out != `"10.0.0.7:7000\n"`+"\n" {
			t.Fatalf("rendezvous wait printed %q", out)
		}
		if out := run("rendezvous", zr, "wait", "-o", "json"); out != `{"path":"`+zr+`","data":"10.0.0.7:7000\n"}`+"\n" {
			t.Fatalf("rendezvous wait -o json printed %q", out)
		}

		base := root + "/services"
		if err := c.EnsurePath(ctx, base+"/api"); err != nil {
			t.Fatal(err)
		}
		if out := run("discover", base, "list", "-o", "json"); out != `{"name":"api"}`+"\n" {
			t.Fatalf("discover list -o json printed %q", out)
		}
	})
}

// bench -o json prints one object per point on stdout, and its commentary
// on stderr.
func TestBenchJSON(t *testing.T) {
	t.Parallel()
	r := zkit(t, "bench", "-o", "json", "--warmup", "0", "--dur", "200ms", "--clients", "1,2", "--workloads", "W4")
	if r.status != exitOK {
		t.Fatalf("status %d: %s", r.status, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 points:\n%s", len(lines), r.stdout)
	}
	for i, line := range lines {
		var p benchJSON
		if err := json.Unmarshal([]byte(line), &p); err != nil || p.Workload != "W4_createdelete" || p.Clients != i+1 || p.Rate <= 0 || p.P50 == nil {
			t.Fatalf("point %q (%v)", line, err)
		}
	}
	if !strings.Contains(r.stderr, "# zkit bench against the embedded reference server") {
		t.Fatalf("no commentary on stderr: %q", r.stderr)
	}
}

// Paths that are not printable text (a node name may hold U+2028, a line
// separator, which ZooKeeper allows) are quoted as Go strings wherever a
// command prints a path as text, as ls and create do: by watch, and by
// the commands that print the node they hold.
func TestTextOutputQuotesPathsThatAreNotPrintable(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, c, ctx := env(t)
	dir := "/odd\u2028name"
	if _, err := c.Create(ctx, dir, nil, client.Persistent); err != nil {
		t.Fatal(err)
	}
	quoted := strings.TrimSuffix(strconv.Quote(dir), `"`) // "/odd\u2028name, open for what follows
	for _, tc := range []struct {
		args []string
		want string // the start of the line
	}{
		{[]string{"watch", "/", "--depth", "1"}, "created " + quoted + `" version=0 `},
		{[]string{"lock", dir + "/l"}, quoted + "/l/"},
		{[]string{"elect", dir + "/e", "--id", "a"}, "a " + quoted + "/e/"},
		{[]string{"members", dir + "/m", "join", "a"}, quoted + `/m/a"`},
		{[]string{"rendezvous", dir + "/zr", "create"}, quoted + `/zr"`},
	} {
		p := start(t, bin, append(tc.args, "--servers", servers)...)
		want := tc.want
		deadline := time.Now().Add(zktest.Scale(20 * time.Second))
		for !slices.ContainsFunc(strings.Split(p.stdout.String(), "\n"), func(l string) bool { return strings.HasPrefix(l, want) }) {
			if time.Now().After(deadline) {
				t.Fatalf("zkit %q printed %q: no line starting %q", tc.args, p.stdout.String(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		if status := p.wait(t); status != exitOK {
			t.Fatalf("zkit %q: status %d after SIGTERM (%q)", tc.args, status, p.stderr.String())
		}
	}
}

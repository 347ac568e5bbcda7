package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/zktest"
)

// background starts the built zkit with args, its stdout and stderr in
// buffers, and returns a function that sends SIGTERM and returns the
// exit status.
func background(t *testing.T, bin string, args ...string) (stdout, stderr *syncBuffer, stop func() int) {
	t.Helper()
	p := start(t, bin, args...)
	return p.stdout, p.stderr, func() int {
		p.cmd.Process.Signal(syscall.SIGTERM)
		return p.wait(t)
	}
}

func TestMembersJoinRunsCommandWhilePresent(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	flag := filepath.Join(t.TempDir(), "go")
	done := make(chan result, 1)
	go func() {
		done <- zkit(t, "members", "/svc", "join", "a-1", "--data", "10.0.0.1", "--servers", servers, "--",
			"sh", "-c", `echo "$ZKIT_MEMBER_NODE $ZKIT_MEMBER_ID"; while [ ! -e `+flag+` ]; do sleep 0.02; done; exit 7`)
	}()
	waitNodes(t, c, "/svc", 1)
	if r := zkit(t, "members", "/svc", "list", "--servers", servers); r.status != 0 || r.stdout != "a-1\t10.0.0.1\n" {
		t.Fatalf("list: %+v", r)
	}
	// The id is taken while the first member lives.
	r := zkit(t, "members", "/svc", "join", "a-1", "--servers", servers, "--", "true")
	if r.status != exitFailed {
		t.Fatalf("second join of a-1: %+v", r)
	}
	oneErrorLine(t, r, "zkit members: ", "/svc", `"a-1"`, "held by session")
	os.WriteFile(flag, nil, 0o644)
	r = <-done
	if r.status != 7 || r.stdout != "/svc/a-1 a-1\n" {
		t.Fatalf("join -- CMD: %+v, want CMD's status 7 and its environment", r)
	}
	group, err := membership.New(c, "/svc").List(ctx)
	if err != nil || len(group) != 0 {
		t.Fatalf("after CMD: %v, %v", group, err)
	}
}

// A member that is deleted while CMD runs is absent: CMD gets SIGTERM and
// zkit exits 5.
func TestMembersJoinLost(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	done := make(chan result, 1)
	running := filepath.Join(t.TempDir(), "running")
	go func() {
		done <- zkit(t, "members", "/svc", "join", "w", "--servers", servers, "--", "sh", "-c", "touch "+running+"; exec sleep 60")
	}()
	waitFile(t, running) // CMD runs: the member is present
	if err := c.Delete(ctx, "/svc/w", -1); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.status != exitLost {
		t.Fatalf("status %d, want %d: %+v", r.status, exitLost, r)
	}
	oneErrorLine(t, r, "member w of /svc absent while sh ran", "deleted")
}

func TestMembersJoinAndWatchUntilStopped(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, c, ctx := env(t)
	watch, _, stopWatch := background(t, bin, "members", "/svc", "watch", "--servers", servers)
	waitOutput(t, watch, "[]\n")
	joined, _, stopJoin := background(t, bin, "members", "/svc", "join", "b", "--data", "x y", "--servers", servers)
	waitOutput(t, joined, "/svc/b\n")
	waitOutput(t, watch, `[{"id":"b","data":"x y"}]`+"\n")
	m, err := membership.New(c, "/svc").Join(ctx, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, watch, `[{"id":"a","data":""},{"id":"b","data":"x y"}]`+"\n")
	if status := stopJoin(); status != 0 {
		t.Fatalf("join stopped with status %d", status)
	}
	m.Leave(ctx)
	lines := func() string { return watch.String() }
	deadline := time.Now().Add(zktest.Scale(20 * time.Second))
	for !strings.HasSuffix(lines(), "\n[]\n") {
		if time.Now().After(deadline) {
			t.Fatalf("watch output %q does not end with the empty group", lines())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if status := stopWatch(); status != 0 {
		t.Fatalf("watch stopped with status %d", status)
	}
}

func TestMembersUsage(t *testing.T) {
	t.Parallel()
	expectUsage(t, "zkit members: ", [][]string{
		{"members"},
		{"members", "/svc"},
		{"members", "relative", "list"},
		{"members", "/svc", "join"},
		{"members", "/svc", "join", "a/b"},
		{"members", "/svc", "join", ""},
		{"members", "/svc", "join", "a", "b"},
		{"members", "/svc", "list", "x"},
		{"members", "/svc", "list", "--data", "x"},
		{"members", "/svc", "frob"},
	})
}

// expectUsage runs each command line (against no server) and checks that
// it is a usage error, said in one line starting with prefix.
func expectUsage(t *testing.T, prefix string, lines [][]string) {
	t.Helper()
	for _, args := range lines {
		r := zkit(t, append(args, "--servers", "127.0.0.1:1")...)
		if r.status != exitUsage {
			t.Errorf("zkit %q: status %d, want %d (%q)", args, r.status, exitUsage, r.stderr)
			continue
		}
		oneErrorLine(t, r, prefix)
	}
}

// An ID taken by a persistent node (no session's: it never goes away by
// itself) is refused with that cause and its fix, not as "held by session
// 0x0" to be waited out.
func TestJoinOnPersistentNodeSaysSo(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	for _, p := range []string{"/svc/p", "/services/api/p"} {
		if err := c.EnsurePath(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"members", "/svc", "join", "p", "--", "true"}, []string{"zkit members: ", `"p"`, "persistent node", "zkit delete /svc/p"}},
		{[]string{"discover", "/services", "register", "api", "p", "--", "true"}, []string{"zkit discover: ", `"p"`, "persistent node", "zkit delete /services/api/p"}},
	} {
		r := zkitOn(t, servers, exitFailed, tc.args...)
		oneErrorLine(t, r, tc.want...)
		if strings.Contains(r.stderr, "session 0x0") {
			t.Errorf("zkit %q: stderr %q", tc.args, r.stderr)
		}
	}
}

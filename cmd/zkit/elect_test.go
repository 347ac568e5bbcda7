package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

func TestElectRunsCommandWithNodeIDAndToken(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	r := zkit(t, "elect", "/svc/sched", "--id", "host-a", "--servers", servers, "--",
		"sh", "-c", `echo "$ZKIT_LEADER_NODE $ZKIT_LEADER_ID $ZKIT_FENCING_TOKEN"; exit 3`)
	if r.status != 3 || r.stderr != "" {
		t.Fatalf("status %d, stderr %q: want CMD's 3 and nothing from zkit", r.status, r.stderr)
	}
	f := strings.Fields(r.stdout)
	if len(f) != 3 || !strings.HasPrefix(f[0], "/svc/sched/_c_") || !strings.Contains(f[0], "-latch-") || f[1] != "host-a" {
		t.Fatalf("CMD saw %q", r.stdout)
	}
	if tok, err := strconv.ParseInt(f[2], 10, 64); err != nil || tok <= 0 {
		t.Fatalf("fencing token %q", f[2])
	}
	if ch, _, err := c.Children(ctx, "/svc/sched"); err != nil || len(ch) != 0 {
		t.Fatalf("after CMD: nodes %v, %v", ch, err)
	}
	// Without --id, the node says who this is: HOSTNAME-PID.
	r = zkit(t, "elect", "/svc/sched", "--servers", servers, "--", "sh", "-c", `echo "$ZKIT_LEADER_ID"`)
	if r.status != 0 || strings.TrimSpace(r.stdout) != defaultID() {
		t.Fatalf("default id: status %d, CMD saw %q, want %q", r.status, r.stdout, defaultID())
	}
}

// CMD runs only once the process leads: --wait gives up while another
// leads, and an unbounded campaign runs CMD once the leader resigns.
func TestElectWaitsForLeadership(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	leader, err := election.New(c, "/svc/x", "other").Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := zkit(t, "elect", "/svc/x", "--wait", "200ms", "--servers", servers, "--", "true")
	if r.status != exitTimeout {
		t.Fatalf("--wait while another leads: status %d, want %d", r.status, exitTimeout)
	}
	oneErrorLine(t, r, "zkit elect: ", "not leading /svc/x within 200ms")
	waitNodes(t, c, "/svc/x", 1)
	done := make(chan result, 1)
	go func() { done <- zkit(t, "elect", "/svc/x", "--servers", servers, "--", "echo", "led") }()
	waitNodes(t, c, "/svc/x", 2)
	select {
	case r := <-done:
		t.Fatalf("CMD ran while another led: %+v", r)
	case <-time.After(zktest.Scale(100 * time.Millisecond)):
	}
	leader.Resign(ctx)
	if r := <-done; r.status != 0 || r.stdout != "led\n" {
		t.Fatalf("after the leader resigned: %+v", r)
	}
}

func TestElectLostTerminatesCommand(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		// CMD's whole group gets SIGTERM, sleep too: 2>/dev/null keeps sh's "Terminated" out of stderr.
		done <- execute([]string{"elect", "/svc/y", "--servers", servers, "--", "sh", "-c",
			`trap 'echo got-term; exit 0' TERM; echo started; while :; do sleep 0.02; done 2>/dev/null`},
			strings.NewReader(""), &out, &errb)
	}()
	waitOutput(t, &out, "started")
	nodes, _, err := c.Children(ctx, "/svc/y")
	if err != nil || len(nodes) != 1 {
		t.Fatalf("election nodes %v, %v", nodes, err)
	}
	// Someone deletes the leader's node: the leadership is lost.
	if err := c.Delete(ctx, "/svc/y/"+nodes[0], -1); err != nil {
		t.Fatal(err)
	}
	select {
	case status := <-done:
		if status != exitLost {
			t.Fatalf("status %d after losing the leadership, want %d", status, exitLost)
		}
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatal("zkit elect did not stop CMD when the leadership was lost")
	}
	oneErrorLine(t, result{stderr: errb.String()}, "zkit elect: ", "leadership of /svc/y lost while sh ran")
	if !strings.Contains(out.String(), "got-term") {
		t.Fatalf("CMD did not get SIGTERM: %q", out.String())
	}
}

// --observe prints one line per change, "none" included, and -o json one
// object per line; SIGTERM ends it with status 0.
func TestElectObserve(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, c, ctx := env(t)
	text, _, stopText := background(t, bin, "elect", "/svc/o", "--observe", "--servers", servers)
	js, _, stopJSON := background(t, bin, "elect", "/svc/o", "--observe", "-o", "json", "--servers", servers)
	waitOutput(t, text, "none\n")
	waitOutput(t, js, `{"leader":false}`+"\n")
	term, err := election.New(c, "/svc/o", "host a").Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, text, "none\nhost a "+term.Node()+" "+strconv.FormatInt(term.Token(), 10)+"\n")
	waitOutput(t, js, "\n{")
	term.Resign(ctx)
	waitOutput(t, text, "\nnone\n")
	waitOutput(t, js, `}`+"\n"+`{"leader":false}`+"\n")
	if status := stopText(); status != 0 {
		t.Fatalf("--observe stopped with status %d", status)
	}
	if status := stopJSON(); status != 0 {
		t.Fatalf("--observe -o json stopped with status %d", status)
	}
	lines := strings.Split(strings.TrimSpace(js.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("-o json printed %q, want 3 lines", js.String())
	}
	var got struct {
		Leader bool
		ID     string
		Node   string
		Token  int64
	}
	if err := json.Unmarshal([]byte(lines[1]), &got); err != nil {
		t.Fatal(err)
	}
	if !got.Leader || got.ID != "host a" || got.Node != term.Node() || got.Token != term.Token() {
		t.Fatalf("-o json leader line %q, want host a's term", lines[1])
	}
}

// --participants prints the candidates in line order, the leader first,
// and -o json one line of them; with none it prints nothing ([]), status 0.
func TestElectParticipants(t *testing.T) {
	servers, c, ctx := env(t)
	const path = "/svc/p"
	if r := zkitOn(t, servers, exitOK, "elect", path, "--participants"); r.stdout != "" {
		t.Fatalf("--participants with no candidate printed %q", r.stdout)
	}
	if r := zkitOn(t, servers, exitOK, "elect", path, "--participants", "-o", "json"); r.stdout != "[]\n" {
		t.Fatalf("--participants -o json with no candidate printed %q", r.stdout)
	}
	term, err := election.New(c, path, "host a").Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Resign(ctx)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go election.New(c, path, "b").Campaign(wctx)
	var ps []election.Participant
	recipetest.Eventually(t, "b in line", func() bool {
		ps, err = election.New(c, path, "").Participants(ctx)
		return err == nil && len(ps) == 2
	})
	want := "host a " + term.Node() + " leader\nb " + ps[1].Node + " candidate\n"
	if r := zkitOn(t, servers, exitOK, "elect", path, "--participants"); r.stdout != want {
		t.Fatalf("--participants printed %q, want %q", r.stdout, want)
	}
	r := zkitOn(t, servers, exitOK, "elect", path, "--participants", "-o", "json")
	var got []struct {
		ID, Node string
		Leader   bool
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 2 || strings.Count(r.stdout, "\n") != 1 ||
		got[0].ID != "host a" || got[0].Node != term.Node() || !got[0].Leader || got[1].ID != "b" || got[1].Leader {
		t.Fatalf("--participants -o json printed %q (%v)", r.stdout, err)
	}
}

func TestElectUsage(t *testing.T) {
	t.Parallel()
	expectUsage(t, "zkit elect: ", [][]string{
		{"elect"},
		{"elect", "/x", "--leader", "--observe"},
		{"elect", "/x", "--leader", "--", "true"},
		{"elect", "/x", "--leader", "--id", "a"},
		{"elect", "/x", "true"},
		{"elect", "relative", "--", "true"},
		{"elect", "/x", "--id", "", "--", "true"},
		{"elect", "/x", "--wait", "-1s", "--", "true"},
		{"elect", "/x", "--json", "--", "true"},
		{"elect", "/x", "--observe", "--", "true"},
		{"elect", "/x", "--observe", "--id", "a"},
		{"elect", "/x", "--observe", "--wait", "1s"},
		{"elect", "/x", "/y", "--observe"},
		{"elect", "/x", "--requeue"},
		{"elect", "/x", "--requeue", "--leader"},
		{"elect", "/x", "--participants", "--leader"},
		{"elect", "/x", "--participants", "--observe"},
		{"elect", "/x", "--participants", "--", "true"},
		{"elect", "/x", "--participants", "--id", "a"},
		{"elect", "/x", "--participants", "--tolerance", "1s"},
		{"elect", "/x", "--requeue", "--participants", "--", "true"},
		{"elect", "/x", "--requeue", "--wait", "1s", "--", "true"},
	})
	// An id the election refuses is a usage error too, said before
	// anything is created.
	servers, c, ctx := env(t)
	r := zkit(t, "elect", "/svc/bad", "--id", "two\nlines", "--servers", servers, "--", "true")
	if r.status != exitUsage {
		t.Fatalf("--id with a newline: status %d, want %d (%q)", r.status, exitUsage, r.stderr)
	}
	oneErrorLine(t, r, "zkit elect: ", "control character")
	if ok, _, err := c.Exists(ctx, "/svc/bad"); err != nil || ok {
		t.Fatalf("a refused id created /svc/bad (%v)", err)
	}
}

// --requeue campaigns again after each term and runs CMD with each one won,
// with a higher token each time, until SIGTERM.
func TestElectRequeue(t *testing.T) {
	t.Parallel()
	servers, _, _ := env(t)
	bin := buildZkit(t)
	file := filepath.Join(t.TempDir(), "terms")
	cmd := exec.Command(bin, "elect", "/svc/requeue", "--requeue", "--servers", servers, "--",
		"sh", "-c", `echo "$ZKIT_FENCING_TOKEN" >> "$0"`, file)
	var errb syncBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(zktest.Scale(30 * time.Second))
	var tokens []string
	for len(tokens) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("terms run: %q; stderr %q", tokens, errb.String())
		}
		time.Sleep(20 * time.Millisecond)
		b, _ := os.ReadFile(file)
		tokens = strings.Fields(string(b))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Stopped between terms it exits 0; campaigning or while CMD runs, as
	// a stopped waiter or CMD does: 128+15.
	if err := cmd.Wait(); err != nil && cmd.ProcessState.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Fatalf("zkit elect --requeue after SIGTERM: %v; stderr %q", err, errb.String())
	}
	for i := 1; i < len(tokens); i++ {
		a, _ := strconv.ParseInt(tokens[i-1], 10, 64)
		b, _ := strconv.ParseInt(tokens[i], 10, 64)
		if b <= a {
			t.Fatalf("tokens %v: not increasing", tokens)
		}
	}
	if !strings.Contains(errb.String(), "campaigning again") {
		t.Fatalf("stderr %q does not say a term ended", errb.String())
	}
}

// zkit elect --requeue campaigns again when a term ends: CMD exited, or
// the leadership was lost. A CMD that cannot be started ends no term, and
// no later term can run it either: zkit says so once and exits 1, rather
// than winning and giving up the leadership every second, forever, with
// "term ended" on stderr each time.
func TestElectRequeueCommandThatCannotStart(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, _, _ := env(t)
	missing := filepath.Join(t.TempDir(), "missing")
	p := start(t, bin, "--servers", servers, "elect", zktest.UniquePath(t), "--requeue", "--", missing)
	select {
	case <-p.done:
	case <-time.After(zktest.Scale(10 * time.Second)):
		t.Fatalf("zkit elect --requeue with a CMD that cannot start still runs after 10s; stderr %q", p.stderr.String())
	}
	if status := p.cmd.ProcessState.ExitCode(); status != exitFailed {
		t.Fatalf("status %d, want %d (stderr %q)", status, exitFailed, p.stderr.String())
	}
	oneErrorLine(t, result{stderr: p.stderr.String()}, "cannot start "+missing)
}

// zkit elect --requeue with no server reachable keeps trying, as it keeps
// campaigning, but says that the servers are unreachable: no term began,
// so none "ended". SIGTERM between attempts exits 0.
func TestElectRequeueUnreachable(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	p := start(t, bin, "--servers", addr, "--connect-timeout", "200ms", "elect", "/rq", "--requeue", "--", "true")
	waitOutput(t, p.stderr, "trying again\n")
	waitOutput(t, p.stderr, "trying again\nzkit elect: no ZooKeeper reachable") // and again
	if strings.Contains(p.stderr.String(), "ended") {
		t.Errorf("stderr names a term that never began: %q", p.stderr.String())
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if status := p.wait(t); status != exitOK {
		t.Errorf("stopped between attempts: status %d, want 0 (stderr %q)", status, p.stderr.String())
	}
}

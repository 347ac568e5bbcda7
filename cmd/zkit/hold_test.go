package main

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// started is a zkit process running in the background.
type started struct {
	stdout, stderr *syncBuffer
	cmd            *exec.Cmd
	done           chan struct{}
}

func start(t *testing.T, bin string, args ...string) *started {
	t.Helper()
	p := &started{stdout: &syncBuffer{}, stderr: &syncBuffer{}, cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
	return p
}

// wait waits for the process to exit by itself and returns its status.
func (p *started) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(zktest.Scale(30 * time.Second)):
		t.Fatalf("zkit did not exit; stderr %q", p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// waitFor waits until cond holds, failing at once if p exits first; what
// says what p was to do ("print ...").
func (p *started) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(20 * time.Second))
	for !cond() {
		select {
		case <-p.done:
			t.Fatalf("zkit exited with status %d while it was to %s (stdout %q, stderr %q)", p.cmd.ProcessState.ExitCode(), what, p.stdout.String(), p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("zkit did not %s within 20s (stdout %q, stderr %q)", what, p.stdout.String(), p.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// line waits for the first line of stdout.
func (p *started) line(t *testing.T) string {
	t.Helper()
	waitOutput(t, p.stdout, "\n")
	return strings.SplitN(p.stdout.String(), "\n", 2)[0]
}

// zkit lock PATH without CMD holds until SIGTERM, printing the node and
// the token, then releases and exits 0; when the lock is lost it exits 5.
func TestLockHoldsWithoutCommand(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers, c := b.Addr(), b.Connect(t)
		path := zktest.UniquePath(t)
		p := start(t, bin, "lock", path, "--servers", servers)
		node, token, ok := strings.Cut(p.line(t), " ")
		_, st, err := c.Get(t.Context(), node)
		if !ok || err != nil || strconv.FormatInt(recipes.TokenOf(st.Czxid), 10) != token || !strings.HasPrefix(node, path+"/") {
			t.Fatalf("printed %q: node %v, %v", p.stdout.String(), st, err)
		}
		if r := zkit(t, "lock", path, "--try", "--servers", servers, "--", "true"); r.status != exitTimeout {
			t.Fatalf("lock taken while held: %+v", r)
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		if status := p.wait(t); status != exitOK {
			t.Fatalf("status %d after SIGTERM, want 0 (%q)", status, p.stderr.String())
		}
		waitNodes(t, c, path, 0)

		p = start(t, bin, "lock", path, "-o", "json", "--servers", servers)
		var held heldJSON
		if err := json.Unmarshal([]byte(p.line(t)), &held); err != nil || held.Node == "" || held.Token == 0 {
			t.Fatalf("-o json printed %q (%v)", p.stdout.String(), err)
		}
		if err := c.Delete(t.Context(), held.Node, -1); err != nil {
			t.Fatal(err)
		}
		if status := p.wait(t); status != exitLost {
			t.Fatalf("status %d after the lock node was deleted, want %d (%q)", status, exitLost, p.stderr.String())
		}
		if got := p.stderr.String(); !strings.Contains(got, "lock "+path+" lost") {
			t.Fatalf("stderr %q", got)
		}
	})
}

// zkit elect PATH without CMD leads until SIGTERM; --leader prints the
// leader once, and "none" with status 1 when there is none.
func TestElectHoldsWithoutCommandAndPrintsLeader(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers := b.Addr()
		path := zktest.UniquePath(t)
		r := zkitOn(t, servers, exitFailed, "elect", path, "--leader")
		if r.stdout != "none\n" {
			t.Fatalf("--leader with no candidate printed %q", r.stdout)
		}
		oneErrorLine(t, r, "no leader at "+path)
		if r := zkitOn(t, servers, exitFailed, "elect", path, "--leader", "-o", "json"); r.stdout != `{"leader":false}`+"\n" {
			t.Fatalf("--leader -o json printed %q", r.stdout)
		}

		p := start(t, bin, "elect", path, "--id", "node a", "--servers", servers)
		line := p.line(t)
		if !strings.HasPrefix(line, "node a "+path+"/") {
			t.Fatalf("printed %q", line)
		}
		if r := zkitOn(t, servers, exitOK, "elect", path, "--leader"); r.stdout != line+"\n" {
			t.Fatalf("--leader printed %q, want %q", r.stdout, line)
		}
		var l heldJSON
		r = zkitOn(t, servers, exitOK, "elect", path, "--leader", "-o", "json")
		if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || !l.Leader || l.ID != "node a" || line != l.ID+" "+l.Node+" "+strconv.FormatInt(l.Token, 10) {
			t.Fatalf("--leader -o json printed %q (%v)", r.stdout, err)
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		if status := p.wait(t); status != exitOK {
			t.Fatalf("status %d after SIGTERM, want 0 (%q)", status, p.stderr.String())
		}
		zkitOn(t, servers, exitFailed, "elect", path, "--leader")
	})
}

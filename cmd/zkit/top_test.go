package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/inspect"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
)

// top refuses to run without a terminal, and for -o json.
func TestTopUsage(t *testing.T) {
	t.Parallel()
	servers, _, _ := env(t)
	for _, args := range [][]string{{"top"}, {"top", "-o", "json"}, {"top", "relative"}, {"top", "--max-nodes", "0"}} {
		r := zkit(t, append(args, "--servers", servers)...)
		if r.status != exitUsage {
			t.Fatalf("%q: %+v, want a usage error", args, r)
		}
	}
}

// tmuxServer is a tmux server of the test's own, on a private socket.
type tmuxServer struct {
	t    *testing.T
	bin  string
	sock string
}

var tmuxSeq atomic.Int64

// startTmux starts a tmux server with one detached session of width x
// height running command, and kills that server when the test ends. It
// skips the test when tmux is missing, unless ZKIT_REQUIRE_ZOOKEEPER=1
// (then tmux is required too, and the test fails).
func startTmux(t *testing.T, width, height int, command string) *tmuxServer {
	t.Helper()
	bin, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv(zktest.RequireZooKeeperEnv) == "1" {
			t.Fatalf("tmux is missing (%s=1 requires it): %v", zktest.RequireZooKeeperEnv, err)
		}
		t.Skipf("skipping: tmux is missing, and the terminal test needs it: %v", err)
	}
	s := &tmuxServer{t: t, bin: bin, sock: fmt.Sprintf("zkit-test-%d-%d", os.Getpid(), tmuxSeq.Add(1))}
	var socket string
	t.Cleanup(func() {
		exec.Command(bin, "-L", s.sock, "kill-server").Run()
		if socket != "" {
			os.Remove(socket) // tmux leaves it behind
		}
	})
	s.run("-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), command)
	socket = strings.TrimSpace(s.run("display-message", "-p", "#{socket_path}"))
	return s
}

// run runs a tmux command against the test's server.
func (s *tmuxServer) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command(s.bin, append([]string{"-L", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is what the pane shows now.
func (s *tmuxServer) screen() string { return s.run("capture-pane", "-p") }

// waitScreen waits until the pane shows what ok accepts, and returns it.
func (s *tmuxServer) waitScreen(what string, ok func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(zktest.Scale(30 * time.Second))
	for {
		screen := s.screen()
		if ok(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting until the screen shows %s; it shows:\n%s", what, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// What a person sees: top in a terminal shows a lock's holder once it is
// taken, and q quits, giving the terminal back as it was.
func TestTopInTmux(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	bin := buildZkit(t)
	root := zktest.UniquePath(t)
	if err := c.EnsurePath(ctx, root); err != nil {
		t.Fatal(err)
	}
	tm := startTmux(t, 120, 20, fmt.Sprintf("echo BEFORE-TOP; '%s' top %s --servers %s; echo TOP-EXITED $?; exec sleep 600", bin, root, servers))
	tm.waitScreen("top's first scan", func(s string) bool { return strings.Contains(s, "no recipes under "+root) })

	held, err := lock.New(c, root+"/jobs").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	session := inspect.Session(c.Session().ID())
	tm.waitScreen("the holder", func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, root+"/jobs ") && strings.Contains(l, " lock ") && strings.Contains(l, session) {
				return true
			}
		}
		return false
	})
	held.Unlock(ctx)
	tm.waitScreen("the lock gone", func(s string) bool { return strings.Contains(s, "no recipes under "+root) })

	tm.run("send-keys", "q")
	screen := tm.waitScreen("top exited", func(s string) bool { return strings.Contains(s, "TOP-EXITED") })
	if !strings.Contains(screen, "TOP-EXITED 0") || !strings.Contains(screen, "BEFORE-TOP") || strings.Contains(screen, "zkit top") {
		t.Fatalf("after q the screen shows:\n%s\nwant the terminal as before top, and status 0", screen)
	}
	if mode := strings.TrimSpace(tm.run("display-message", "-p", "#{alternate_on} #{cursor_flag}")); mode != "0 1" {
		t.Fatalf("after q: alternate screen, cursor shown = %q, want \"0 1\"", mode)
	}
}

// top's model: q and Ctrl-C quit, suspensions are counted, a failed read
// keeps the last scan on screen and says why, and the view fits the
// window.
func TestTopModel(t *testing.T) {
	t.Parallel()
	m := &topModel{servers: "zk1:2181", roots: "/app", now: time.Now()}
	for _, key := range []tea.KeyPressMsg{{Code: 'q', Text: "q"}, {Code: 'c', Mod: tea.ModCtrl}} {
		if _, cmd := m.Update(key); cmd == nil || cmd() != tea.Quit() {
			t.Fatalf("key %q: does not quit", key.String())
		}
	}
	for _, s := range []bool{true, true, false, true} {
		m.Update(connMsg{suspended: s})
	}
	if m.suspensions != 2 || !m.suspended {
		t.Fatalf("suspensions %d, suspended %v; want 2, true", m.suspensions, m.suspended)
	}
	snap := &inspect.Snapshot{Roots: []string{"/app"}, Reports: []*inspect.Report{{Path: "/app/lock", Kind: inspect.Lock,
		Nodes: []inspect.Node{{Role: inspect.Holder, Session: 0xabc, Created: time.Now()}}}}}
	m.Update(scanMsg{snap: snap})
	m.Update(scanMsg{err: errors.New("zkit: connection lost")})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 10})
	v := m.View()
	lines := strings.Split(v.Content, "\n")
	if !v.AltScreen || !strings.Contains(lines[0], "SUSPENDED, suspended 2 times") || !strings.Contains(lines[0], "last read failed: connection lost") ||
		!strings.HasPrefix(lines[3], "/app/lock") || !strings.Contains(lines[3], "0xabc") {
		t.Fatalf("view:\n%s", v.Content)
	}
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 10})
	for _, l := range strings.Split(m.View().Content, "\n") {
		if len([]rune(l)) > 60 {
			t.Fatalf("line %q is wider than the window", l)
		}
	}
}

// top's first line follows its own connection through an outage longer
// than the session timeout: SUSPENDED, then SESSION LOST once the session
// is lost (not "connected": nothing is), and connected again with a
// fresh read once a new session is established.
func TestTopSaysWhenItsSessionIsLost(t *testing.T) {
	t.Parallel()
	b := zktest.ReferenceBackend(t)
	opts, cut, heal := b.Blackhole(t)
	c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(time.Second)))...)
	root := zktest.UniquePath(t)
	if err := c.EnsurePath(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	msgs := make(chan tea.Msg, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		followTree(ctx, c, inspect.NewScanner(c, []string{root}, 100), func(msg tea.Msg) { msgs <- msg })
	}()
	t.Cleanup(func() { cancel(); <-done })
	m := &topModel{servers: b.Addr(), roots: root, now: time.Now()}
	until := func(what string, ok func(title string) bool) {
		t.Helper()
		deadline := time.After(zktest.Scale(30 * time.Second))
		for !ok(m.title()) {
			select {
			case msg := <-msgs:
				m.Update(msg)
			case <-deadline:
				t.Fatalf("%s: top's first line is %q", what, m.title())
			}
		}
	}
	until("the first read", func(s string) bool { return m.snap != nil && strings.Contains(s, " connected,") })
	cut()
	until("the session lost", func(s string) bool { return strings.Contains(s, "SESSION LOST") })
	heal()
	until("back", func(s string) bool {
		return strings.Contains(s, " connected,") && !strings.Contains(s, "last read failed")
	})
}

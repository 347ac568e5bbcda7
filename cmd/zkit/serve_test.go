package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
	"github.com/zkit-dev/zkit/internal/wireclient"
	"github.com/zkit-dev/zkit/zktest"
)

// startServe runs zkit serve with args on a free port and returns it and
// its address; it is killed when the test ends.
func startServe(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	bin := buildZkit(t)
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-lines:
		return cmd, strings.TrimSpace(strings.TrimPrefix(line, "zkit reference server listening on "))
	case <-time.After(30 * time.Second):
		t.Fatal("zkit serve printed no address")
	}
	return nil, ""
}

func TestServeAnswersAndStopsOnSignal(t *testing.T) {
	t.Parallel()
	cmd, addr := startServe(t)
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	nc.Write([]byte("ruok"))
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, _ := io.ReadAll(nc)
	nc.Close()
	if string(got) != "imok" {
		t.Fatalf("ruok: %q", got)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("zkit serve did not stop on SIGTERM")
	}
}

func TestServeErrorIsOneLine(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	out, err := exec.Command(bin, "serve", "--listen", "256.0.0.1:1").CombinedOutput()
	if err == nil {
		t.Fatal("serve on a bad address succeeded")
	}
	if lines := strings.Count(strings.TrimSpace(string(out)), "\n"); lines != 0 || !strings.HasPrefix(string(out), "zkit serve: ") {
		t.Fatalf("want one error line, got %q", out)
	}
}

// A --listen that is not host:port is a wrong command line: a usage error
// (status 2) before anything starts, as a bad --servers is, not a failure
// to listen (status 1).
func TestServeBadListenIsUsage(t *testing.T) {
	t.Parallel()
	for _, listen := range []string{"nonsense", "127.0.0.1", "127.0.0.1:99999", "127.0.0.1:-1"} {
		r := zkit(t, "serve", "--listen", listen)
		if r.status != exitUsage {
			t.Errorf("zkit serve --listen %q: status %d, want %d (%q)", listen, r.status, exitUsage, r.stderr)
			continue
		}
		oneErrorLine(t, r, "--listen")
	}
}

// serveAnswers reports whether digest auth "super:test" makes a super
// user, and the code a reconfig gets.
func serveAnswers(t *testing.T, addr string) (super bool, reconfig jute.Error) {
	t.Helper()
	c, err := wireclient.Connect(addr, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, h, err := c.Call(jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("super:test")}, nil); err != nil || h.Err != 0 {
		t.Fatalf("auth: %v %v", h, err)
	}
	var who jute.WhoAmIResponse
	if _, _, err := c.Call(jute.OpWhoAmI, nil, &who); err != nil {
		t.Fatal(err)
	}
	for _, id := range who.ClientInfo {
		super = super || id.AuthScheme == "super"
	}
	_, h, err := c.Call(jute.OpReconfig, &jute.ReconfigRequest{CurConfigID: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return super, jute.Error(h.Err)
}

// refusesAfter holds n sessions on addr and reports whether the next
// connection goes unanswered. Each held session has been answered, so the
// server counts all n, whatever it still counts of connections closed
// before (it counts a connection until it has seen it close, and refuses
// one in the meantime: such a refusal is retried).
func refusesAfter(t *testing.T, addr string, n int) bool {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(10 * time.Second))
	for held := 0; held < n; {
		c, err := wireclient.Connect(addr, 30*time.Second)
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("connection %d of %d: %v", held+1, n, err)
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		t.Cleanup(func() { c.Close() })
		held++
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return true
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	nc.Write([]byte("ruok"))
	b, _ := io.ReadAll(nc)
	return string(b) != "imok"
}

// The settings peers' test harnesses give ZooKeeper, and ZooKeeper's
// defaults without them.
func TestServeHarnessSettings(t *testing.T) {
	t.Parallel()
	_, addr := startServe(t, "--super-digest", "super:D/InIHSb7yEEbrWz8b9l71RjZJU=", "--reconfig-enabled", "--max-client-cnxns", "3")
	if super, reconfig := serveAnswers(t, addr); !super || reconfig != jute.ErrUnimplemented {
		t.Errorf("with the settings: super user %v, reconfig %v; want true, Unimplemented", super, reconfig)
	}
	if !refusesAfter(t, addr, 3) {
		t.Error("--max-client-cnxns 3: a fourth connection was answered")
	}
	_, addr = startServe(t)
	if super, reconfig := serveAnswers(t, addr); super || reconfig != jute.ErrReconfigDisabled {
		t.Errorf("by default: super user %v, reconfig %v; want false, ReconfigDisabled", super, reconfig)
	}
	if !refusesAfter(t, addr, 60) {
		t.Error("by default: a 61st connection was answered")
	}
}

func TestServeBadSettingsAreUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--super-digest", "super:test"}, {"--super-digest", "nocolon"}, {"--max-client-cnxns", "-1"},
	} {
		r := zkit(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
		if r.status != exitUsage {
			t.Errorf("zkit serve %q: status %d, want %d (%q)", args, r.status, exitUsage, r.stderr)
			continue
		}
		oneErrorLine(t, r, args[0])
	}
}

func TestServeHelpListsSettings(t *testing.T) {
	t.Parallel()
	r := zkit(t, "serve", "--help")
	for _, flag := range []string{"--max-client-cnxns", "--super-digest", "--reconfig-enabled"} {
		if !strings.Contains(r.stdout, flag) {
			t.Errorf("zkit serve --help does not list %s", flag)
		}
	}
}

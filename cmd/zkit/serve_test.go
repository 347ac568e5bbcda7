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
)

func TestServeAnswersAndStopsOnSignal(t *testing.T) {
	bin := buildZkit(t)
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		io.Copy(io.Discard, stdout)
	}()
	var addr string
	select {
	case line := <-lines:
		addr = strings.TrimSpace(strings.TrimPrefix(line, "zkit reference server listening on "))
	case <-time.After(30 * time.Second):
		t.Fatal("zkit serve printed no address")
	}
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
	for _, listen := range []string{"nonsense", "127.0.0.1", "127.0.0.1:99999", "127.0.0.1:-1"} {
		r := zkit(t, "serve", "--listen", listen)
		if r.status != exitUsage {
			t.Errorf("zkit serve --listen %q: status %d, want %d (%q)", listen, r.status, exitUsage, r.stderr)
			continue
		}
		oneErrorLine(t, r, "--listen")
	}
}

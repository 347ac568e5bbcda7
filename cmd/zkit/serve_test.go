package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildZkit builds the command once per test binary.
func buildZkit(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "zkit")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestServeAnswersAndStopsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
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
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildZkit(t)
	out, err := exec.Command(bin, "serve", "--listen", "256.0.0.1:1").CombinedOutput()
	if err == nil {
		t.Fatal("serve on a bad address succeeded")
	}
	if lines := strings.Count(strings.TrimSpace(string(out)), "\n"); lines != 0 || !strings.HasPrefix(string(out), "zkit serve: ") {
		t.Fatalf("want one error line, got %q", out)
	}
}

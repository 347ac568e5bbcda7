package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/zktest"
)

func TestConfigSetAndGet(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	if r := zkit(t, "config", "/app/config", "set", "workers=8", "db=primary", "debug=true", "--servers", servers); r.status != 0 || r.stdout != "" {
		t.Fatalf("set: %+v", r)
	}
	r := zkit(t, "config", "/app/config", "get", "--servers", servers)
	if want := `{"db":"primary","debug":true,"workers":8}` + "\n"; r.status != 0 || r.stdout != want {
		t.Fatalf("get: %+v, want %q", r, want)
	}
	// The library reads what the command wrote.
	type cfg struct {
		Workers int    `json:"workers"`
		DB      string `json:"db"`
	}
	s, err := configwatch.New(c, "/app/config", configwatch.JSON[cfg]).Get(ctx)
	if err != nil || s.Value != (cfg{8, "primary"}) {
		t.Fatalf("library Get: %+v, %v", s.Value, err)
	}
	if r := zkit(t, "config", "/app/config", "set", `db="8"`, "--delete", "debug", "--atomic", "--servers", servers); r.status != 0 {
		t.Fatalf("atomic set: %+v", r)
	}
	r = zkit(t, "config", "/app/config", "get", "--servers", servers)
	if want := `{"db":"8","workers":8}` + "\n"; r.stdout != want {
		t.Fatalf("get after the atomic set: %q, want %q", r.stdout, want)
	}
}

func TestConfigGetErrors(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	r := zkit(t, "config", "/nothing", "get", "--servers", servers)
	if r.status != exitFailed {
		t.Fatalf("get of a missing configuration: status %d, want %d", r.status, exitFailed)
	}
	oneErrorLine(t, r, "zkit config: ", "no configuration at /nothing", "set KEY=VALUE")
	// A publish that never completed: keys, no ready.
	if err := c.EnsurePath(ctx, "/half"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/half/k", []byte("1"), client.Persistent); err != nil {
		t.Fatal(err)
	}
	r = zkit(t, "config", "/half", "get", "--wait", "200ms", "--servers", servers)
	if r.status != exitTimeout {
		t.Fatalf("get of a half publish: status %d, want %d", r.status, exitTimeout)
	}
	oneErrorLine(t, r, "not complete within 200ms", "/half/ready is missing")
}

func TestConfigBadArguments(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"/x"},
		{"/x", "frobnicate"},
		{"relative", "get"},
		{"/", "get"},
		{"/x", "get", "extra"},
		{"/x", "watch", "extra"},
		{"/x", "set"},
		{"/x", "set", "novalue"},
		{"/x", "set", "a=1", "a=2"},
		{"/x", "set", "a=1", "--delete", "a"},
		{"/x", "get", "--atomic"},
		{"/x", "set", "a=1", "--wait", "1s"},
	} {
		r := zkit(t, append([]string{"config"}, args...)...)
		if r.status != exitUsage {
			t.Errorf("zkit config %q: status %d, want %d", args, r.status, exitUsage)
			continue
		}
		oneErrorLine(t, r, "zkit config: ", "zkit config --help")
	}
	servers, _, _ := env(t)
	for _, bad := range []string{"ready=1", "a/b=1", "=1"} {
		r := zkit(t, "config", "/x", "set", bad, "--servers", servers)
		if r.status != exitUsage {
			t.Errorf("set %s: status %d, want %d", bad, r.status, exitUsage)
			continue
		}
		oneErrorLine(t, r, "zkit config: ")
	}
	// Refused before connecting: no server is needed to tell a bad key.
	for _, bad := range [][]string{{"ready=1"}, {"a/b=1"}, {"=1"}, {"..=1"}, {"a=1", "--delete", "x/y"}} {
		args := append([]string{"config", "/x", "set", "--servers", "127.0.0.1:1", "--connect-timeout", "10s"}, bad...)
		if r := zkit(t, args...); r.status != exitUsage {
			t.Errorf("zkit %q: status %d, want %d (%q)", args, r.status, exitUsage, r.stderr)
		}
	}
}

// watch prints the current configuration, then one line per publish, and
// stops on SIGINT with status 0.
func TestConfigWatch(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, c, ctx := env(t)
	if _, err := configwatch.New(c, "/w", configwatch.Raw).Set(ctx, configwatch.Values{"n": []byte("1")}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "config", "/w", "watch", "--servers", servers)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(zktest.Scale(20 * time.Second)):
			t.Fatal("zkit config watch printed nothing")
		}
		return ""
	}
	if l := next(); l != `{"n":1}` {
		t.Fatalf("first line %q", l)
	}
	for _, opts := range [][]configwatch.Option{nil, {configwatch.WithAtomic()}} {
		if _, err := configwatch.New(c, "/w", configwatch.Raw, opts...).Set(context.Background(), configwatch.Values{"n": []byte("2"), "m": []byte(`"x"`)}); err != nil {
			t.Fatal(err)
		}
		if l := next(); l != `{"m":"x","n":2}` {
			t.Fatalf("after a publish: %q", l)
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGINT: %v", err)
		}
	case <-time.After(zktest.Scale(10 * time.Second)):
		t.Fatal("zkit config watch did not stop on SIGINT")
	}
	if rest := strings.Join(drain(lines), "\n"); rest != "" {
		t.Fatalf("more lines: %q", rest)
	}
}

func drain(ch <-chan string) []string {
	var out []string
	for l := range ch {
		out = append(out, l)
	}
	return out
}

// config get prints one JSON object: valid JSON, which is UTF-8 (RFC
// 8259), whatever VALUE set was given. A VALUE such as "\xff" (quoted,
// with a byte that is not UTF-8) is not valid JSON, so set stores it as a
// JSON string, as it does any other non-JSON VALUE.
func TestConfigGetIsValidJSONAfterNonUTF8Value(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	zkitOn(t, servers, exitOK, "config", "/cfg", "set", "a=\"\xff\"", "b=\xfe", "c=8")
	data, _, err := c.Get(ctx, "/cfg/a")
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(data) {
		t.Errorf("config set stored key a as %q: not UTF-8, not JSON", data)
	}
	r := zkitOn(t, servers, exitOK, "config", "/cfg", "get")
	out := strings.TrimSuffix(r.stdout, "\n")
	var got map[string]any
	if !utf8.ValidString(out) || json.Unmarshal([]byte(out), &got) != nil || strings.Contains(out, "\n") {
		t.Fatalf("config get printed %q: not one line of valid (UTF-8) JSON", r.stdout)
	}
	if got["c"] != 8.0 {
		t.Fatalf("config get: %v", got)
	}
}

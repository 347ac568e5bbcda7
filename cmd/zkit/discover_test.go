package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/zktest"
)

func TestDiscoverRegisterRunsCommandWhilePresent(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	flag := filepath.Join(t.TempDir(), "go")
	done := make(chan result, 1)
	go func() {
		done <- zkit(t, "discover", "/services", "register", "api", "a-1", "--address", "10.0.0.1", "--port", "8080", "--servers", servers, "--",
			"sh", "-c", `echo "$ZKIT_INSTANCE_NODE $ZKIT_INSTANCE_ID $ZKIT_SERVICE"; while [ ! -e `+flag+` ]; do sleep 0.02; done; exit 7`)
	}()
	waitNodes(t, c, "/services/api", 1)
	if r := zkit(t, "discover", "/services", "list", "--servers", servers); r.status != 0 || r.stdout != "api\n" {
		t.Fatalf("list: %+v", r)
	}
	// The id is taken while the first instance lives.
	r := zkit(t, "discover", "/services", "register", "api", "a-1", "--servers", servers, "--", "true")
	if r.status != exitFailed {
		t.Fatalf("second register of a-1: %+v", r)
	}
	oneErrorLine(t, r, "zkit discover: ", "/services/api", `"a-1"`, "held by session")
	os.WriteFile(flag, nil, 0o644)
	r = <-done
	if r.status != 7 || r.stdout != "/services/api/a-1 a-1 api\n" {
		t.Fatalf("register -- CMD: %+v, want CMD's status 7 and its environment", r)
	}
	left, err := discovery.New(c, "/services").Instances(ctx, "api")
	if err != nil || len(left) != 0 {
		t.Fatalf("after CMD: %v, %v", left, err)
	}
}

// An instance that is deleted while CMD runs is absent: CMD gets SIGTERM
// and zkit exits 5.
func TestDiscoverRegisterLost(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	done := make(chan result, 1)
	running := filepath.Join(t.TempDir(), "running")
	go func() {
		done <- zkit(t, "discover", "/services", "register", "api", "w", "--servers", servers, "--", "sh", "-c", "touch "+running+"; exec sleep 60")
	}()
	waitFile(t, running) // CMD runs: the instance is present
	if err := c.Delete(ctx, "/services/api/w", -1); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.status != exitLost {
		t.Fatalf("status %d, want %d: %+v", r.status, exitLost, r)
	}
	oneErrorLine(t, r, "instance w of api absent while sh ran", "deleted")
}

// list NAME prints each instance as Curator stores it, with every flag of
// register in it.
func TestDiscoverList(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, _, _ := env(t)
	out, _, stop := background(t, bin, "discover", "/services", "register", "api", "b", "--address", "h", "--port", "80",
		"--ssl-port", "443", "--uri-spec", "{scheme}://{address}:{ssl-port}/x?a&b", "--payload", `{"zone":"eu"}`, "--disabled", "--servers", servers)
	waitOutput(t, out, "/services/api/b\n")
	r := zkit(t, "discover", "/services", "list", "api", "--servers", servers)
	if r.status != 0 || strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stdout, "/x?a&b") {
		t.Fatalf("list api: %+v", r)
	}
	var inst discovery.Instance
	if err := json.Unmarshal([]byte(r.stdout), &inst); err != nil {
		t.Fatal(err)
	}
	if inst.Name != "api" || inst.ID != "b" || inst.Address != "h" || inst.Port != 80 || inst.SSLPort != 443 || !inst.Disabled ||
		string(inst.Payload) != `{"zone":"eu"}` || inst.URI(nil) != "https://h:443/x?a&b" || inst.Registered.IsZero() {
		t.Fatalf("listed %v", inst)
	}
	if status := stop(); status != 0 {
		t.Fatalf("register stopped with status %d", status)
	}
	if r := zkit(t, "discover", "/services", "list", "api", "--servers", servers); r.status != 0 || r.stdout != "" {
		t.Fatalf("list after register stopped: %+v", r)
	}
}

func TestDiscoverRegisterAndWatchUntilStopped(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, c, ctx := env(t)
	watch, _, stopWatch := background(t, bin, "discover", "/services", "watch", "api", "--servers", servers)
	waitOutput(t, watch, "[]\n")
	registered, _, stopRegister := background(t, bin, "discover", "/services", "register", "api", "b", "--address", "10.0.0.2", "--servers", servers)
	waitOutput(t, registered, "/services/api/b\n")
	waitOutput(t, watch, `"id":"b","address":"10.0.0.2"`)
	r, err := discovery.New(c, "/services").Register(ctx, discovery.Instance{Name: "api", ID: "a", Address: "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	waitLastLine(t, watch, func(line string) bool {
		var got []discovery.Instance
		return json.Unmarshal([]byte(line), &got) == nil && len(got) == 2 && got[0].ID == "a" && got[1].Address == "10.0.0.2"
	})
	if status := stopRegister(); status != 0 {
		t.Fatalf("register stopped with status %d", status)
	}
	r.Unregister(ctx)
	waitLastLine(t, watch, func(line string) bool { return line == "[]" })
	if status := stopWatch(); status != 0 {
		t.Fatalf("watch stopped with status %d", status)
	}
}

// waitLastLine waits until the last line s printed satisfies ok.
func waitLastLine(t *testing.T, s *syncBuffer, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(20 * time.Second))
	for {
		lines := strings.Split(strings.TrimSuffix(s.String(), "\n"), "\n")
		if last := lines[len(lines)-1]; ok(last) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("last line of %q is not the one awaited", s.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDiscoverUsage(t *testing.T) {
	t.Parallel()
	expectUsage(t, "zkit discover: ", [][]string{
		{"discover"},
		{"discover", "/services"},
		{"discover", "relative", "list"},
		{"discover", "/services", "register"},
		{"discover", "/services", "register", "api"},
		{"discover", "/services", "register", "api", "a/b"},
		{"discover", "/services", "register", "a/b", "x"},
		{"discover", "/services", "register", "api", ""},
		{"discover", "/services", "register", "api", "a", "b"},
		{"discover", "/services", "register", "api", "a", "--port", "70000"},
		{"discover", "/services", "register", "api", "a", "--payload", "{oops"},
		{"discover", "/services", "register", "api", "a", "--uri-spec", "{open"},
		{"discover", "/services", "list", "api", "x"},
		{"discover", "/services", "list", "a/b"},
		{"discover", "/services", "list", "--port", "1"},
		{"discover", "/services", "watch"},
		{"discover", "/services", "watch", "api", "--", "true"},
		{"discover", "/services", "frob"},
	})
}

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/inspect"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
)

func TestInspectLock(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	held, err := lock.New(c, "/app/lock").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	session := inspect.Session(c.Session().ID())

	r := zkit(t, "inspect", "/app/lock", "--servers", servers)
	if r.status != 0 || !strings.Contains(r.stdout, "kind:      lock\n") || r.stderr != "" {
		t.Fatalf("inspect: %+v", r)
	}
	var holder string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "holder ") {
			holder = l
		}
	}
	if !strings.Contains(holder, session) || !strings.Contains(holder, " "+strconv.FormatInt(held.Token(), 10)+" ") {
		t.Fatalf("holder line %q does not show session %s and token %d:\n%s", holder, session, held.Token(), r.stdout)
	}

	r = zkit(t, "inspect", "/app/lock", "-o", "json", "--servers", servers)
	var got struct {
		Kind  string `json:"kind"`
		Nodes []struct {
			Role    string `json:"role"`
			Session string `json:"session"`
			Token   int64  `json:"token"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.status != 0 || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("inspect -o json: %v: %+v", err, r)
	}
	if got.Kind != "lock" || len(got.Nodes) != 1 || got.Nodes[0].Role != "holder" || got.Nodes[0].Session != session || got.Nodes[0].Token != held.Token() {
		t.Fatalf("json %s", r.stdout)
	}
}

// A path of no recipe is listed and said so, with status 0; a missing
// path fails; a bad one is a usage error.
func TestInspectUnknownMissingUsage(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	for _, p := range []string{"/plain", "/plain/a", "/plain/b"} {
		if _, err := c.Create(ctx, p, []byte("x\ty"), client.Persistent); err != nil {
			t.Fatal(err)
		}
	}
	r := zkit(t, "inspect", "/plain", "--servers", servers)
	if r.status != 0 || !strings.Contains(r.stdout, "kind:  unknown") || !strings.Contains(r.stdout, `"x\ty"`) ||
		!strings.Contains(r.stdout, "note: no recipe's layout recognised") {
		t.Fatalf("inspect /plain: %+v", r)
	}
	r = zkit(t, "inspect", "/missing", "--servers", servers)
	if r.status != exitFailed || r.stdout != "" {
		t.Fatalf("inspect /missing: %+v", r)
	}
	oneErrorLine(t, r, "zkit inspect: ", "/missing", "no such node")
	for _, args := range [][]string{{"inspect"}, {"inspect", "relative"}, {"inspect", "/a", "/b"}} {
		if r := zkit(t, append(args, "--servers", servers)...); r.status != exitUsage {
			t.Fatalf("%q: %+v, want a usage error", args, r)
		}
	}
}

// inspect -o json keeps data that is not UTF-8, as get -o json does:
// "data_base64" instead of "data", never U+FFFD in place of the bytes (a
// long counter's 8 bytes, a binary child's data).
func TestInspectJSONKeepsBinaryData(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	counterData := []byte{0, 0, 0, 0, 0, 0, 0, 0xff}
	childData := []byte{0xff, 0xfe, 'a'}
	if _, err := c.Create(ctx, "/bin", []byte{0x80}, client.Persistent); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/bin/x", childData, client.Persistent); err != nil {
		t.Fatal(err)
	}
	r := zkitOn(t, servers, exitOK, "counter", "/n", "add", "255")
	_ = r

	type nodeOut struct {
		Name       string  `json:"name"`
		Data       *string `json:"data"`
		DataBase64 string  `json:"data_base64"`
	}
	var got struct {
		Data       *string   `json:"data"`
		DataBase64 string    `json:"data_base64"`
		Nodes      []nodeOut `json:"nodes"`
	}
	decoded := func(data *string, b64 string) []byte {
		if data != nil {
			return []byte(*data)
		}
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatalf("data_base64 %q: %v", b64, err)
		}
		return b
	}

	r = zkitOn(t, servers, exitOK, "inspect", "/n", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("inspect /n -o json: %v: %q", err, r.stdout)
	}
	if b := decoded(got.Data, got.DataBase64); !bytes.Equal(b, counterData) {
		t.Errorf("inspect /n -o json: the counter's data is %q, want %q (%s)", b, counterData, r.stdout)
	}

	got.Data, got.DataBase64, got.Nodes = nil, "", nil
	r = zkitOn(t, servers, exitOK, "inspect", "/bin", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.Nodes) != 1 {
		t.Fatalf("inspect /bin -o json: %v: %q", err, r.stdout)
	}
	if b := decoded(got.Data, got.DataBase64); !bytes.Equal(b, []byte{0x80}) {
		t.Errorf("inspect /bin -o json: the path's data is %q, want %q (%s)", b, "\x80", r.stdout)
	}
	if b := decoded(got.Nodes[0].Data, got.Nodes[0].DataBase64); !bytes.Equal(b, childData) {
		t.Errorf("inspect /bin -o json: child x's data is %q, want %q (%s)", b, childData, r.stdout)
	}
}

// lock, semaphore and elect write who holds it in their nodes, --id or
// HOSTNAME-PID, and inspect shows it (ID), on both servers.
func TestInspectShowsWhoHolds(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers := b.Addr()
		dir := zktest.UniquePath(t)
		release := filepath.Join(t.TempDir(), "release")
		wait := []string{"--", "sh", "-c", "while [ ! -e " + release + " ]; do sleep 0.02; done"}
		lockHolder := start(t, bin, append([]string{"lock", dir + "/lock", "--id", "backup@db-1", "--servers", servers}, wait...)...)
		semHolder := start(t, bin, append([]string{"semaphore", dir + "/sem", "--max", "2", "--servers", servers}, wait...)...)
		elected := start(t, bin, append([]string{"elect", dir + "/elect", "--servers", servers}, wait...)...)
		host, _ := os.Hostname()
		for _, tc := range []struct {
			p        *started
			path, id string
		}{
			{lockHolder, dir + "/lock", "backup@db-1"},
			{semHolder, dir + "/sem", fmt.Sprintf("%s-%d", host, semHolder.cmd.Process.Pid)},
			{elected, dir + "/elect", fmt.Sprintf("%s-%d", host, elected.cmd.Process.Pid)},
		} {
			var out string
			tc.p.waitFor(t, "hold "+tc.path, func() bool {
				out = zkit(t, "inspect", tc.path, "-o", "json", "--servers", servers).stdout
				return strings.Contains(out, `"role":"holder"`) || strings.Contains(out, `"role":"leader"`)
			})
			if !strings.Contains(out, `"id":"`+tc.id+`"`) {
				t.Fatalf("inspect %s -o json: %s\nwant the holder's id %q", tc.path, out, tc.id)
			}
			if text := zkitOn(t, servers, exitOK, "inspect", tc.path).stdout; !strings.Contains(text, " ID ") || !strings.Contains(text, `"`+tc.id+`"`) {
				t.Fatalf("inspect %s:\n%s\nwant an ID column with %q", tc.path, text, tc.id)
			}
		}
		os.WriteFile(release, nil, 0o644)
		for _, p := range []*started{lockHolder, semHolder, elected} {
			if status := p.wait(t); status != exitOK {
				t.Fatalf("status %d (%q)", status, p.stderr.String())
			}
		}
	})
}

func TestHolderIDUsage(t *testing.T) {
	t.Parallel()
	expectUsage(t, "--id is empty", [][]string{
		{"lock", "/x", "--id", "", "--", "true"},
		{"semaphore", "/x", "--max", "1", "--id", "", "--", "true"},
		{"elect", "/x", "--id", "", "--", "true"},
	})
}

package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// zkit watch prints the tree, "initialized", then each change, and exits 0
// when stopped.
func TestWatchPrintsStateThenChanges(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, c, ctx := env(t)
	for _, p := range []string{"/w", "/w/a", "/w/a/deep"} {
		if _, err := c.Create(ctx, p, []byte("x"), client.Persistent); err != nil {
			t.Fatal(err)
		}
	}
	out, _, stop := background(t, bin, "watch", "/w", "--recursive", "--servers", servers)
	waitOutput(t, out, "initialized zxid=")
	lines := strings.Split(out.String(), "\n")
	for i, want := range []string{`created /w version=0 `, `created /w/a version=0 `, `created /w/a/deep version=0 `, "initialized "} {
		if !strings.HasPrefix(lines[i], want) {
			t.Fatalf("line %d %q, want %q first in %q", i, lines[i], want, out.String())
		}
	}
	if _, err := c.Set(ctx, "/w/a/deep", []byte("y"), -1); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, `changed /w/a/deep version=1 `)
	waitOutput(t, out, `data="y"`)
	if err := c.Delete(ctx, "/w/a/deep", -1); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "deleted /w/a/deep\n") // no zxid: the reference server says none, as ZooKeeper 3.8
	if status := stop(); status != 0 {
		t.Fatalf("watch stopped with status %d", status)
	}
}

// With -o json each line is one object, its data as every command prints
// data: "data" for text, "data_base64" for bytes that are not UTF-8; data
// and version are absent on deleted; without --recursive the children
// alone are followed.
func TestWatchJSON(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, c, ctx := env(t)
	for _, p := range []string{"/j", "/j/a", "/j/a/below"} {
		if _, err := c.Create(ctx, p, []byte("d"), client.Persistent); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Create(ctx, "/j/bin", []byte("\x00\xff"), client.Persistent); err != nil {
		t.Fatal(err)
	}
	out, _, stop := background(t, bin, "watch", "/j", "-o", "json", "--servers", servers)
	waitOutput(t, out, `"type":"initialized"`)
	if err := c.Delete(ctx, "/j/a/below", -1); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "/j/a", -1); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, `"type":"deleted"`)
	if status := stop(); status != 0 {
		t.Fatalf("watch stopped with status %d", status)
	}
	var got []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got = append(got, m)
	}
	if len(got) != 5 {
		t.Fatalf("%d lines, want 5: %s", len(got), out.String())
	}
	for i, want := range []string{"created", "created", "created", "initialized", "deleted"} {
		if got[i]["type"] != want {
			t.Fatalf("line %d: %v, want type %s", i, got[i], want)
		}
	}
	if got[1]["path"] != "/j/a" || got[1]["data"] != "d" || got[1]["version"] != 0.0 || got[1]["zxid"] == nil {
		t.Fatalf("created line %v", got[1])
	}
	if _, ok := got[2]["data"]; ok || got[2]["path"] != "/j/bin" || got[2]["data_base64"] != "AP8=" {
		t.Fatalf("created line of binary data %v", got[2])
	}
	if _, ok := got[4]["data"]; ok || got[4]["data_base64"] != nil || got[4]["version"] != nil || got[4]["zxid"] != nil || got[4]["path"] != "/j/a" {
		t.Fatalf("deleted line %v", got[4])
	}
}

// A deleted line's zxid is the delete's where the server says it (the
// reference server as ZooKeeper 3.9 does), and absent where it does not
// (ZooKeeper 3.8): never a later transaction's, also when the node is
// created again at once.
func TestWatchDeletedZxid(t *testing.T) {
	bin := buildZkit(t)
	for _, b := range recipetest.EventZxidBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			c := b.Connect(t)
			dir := zktest.UniquePath(t)
			if err := c.EnsurePath(t.Context(), dir+"/x"); err != nil {
				t.Fatal(err)
			}
			for _, output := range []string{"text", "json"} {
				out, _, stop := background(t, bin, "watch", dir, "-o", output, "--servers", b.Addr())
				waitOutput(t, out, "initialized")
				if err := c.Delete(t.Context(), dir+"/x", -1); err != nil {
					t.Fatal(err)
				}
				deleted := c.LastZxid()
				if _, err := c.Create(t.Context(), dir+"/x", nil, client.Persistent); err != nil {
					t.Fatal(err)
				}
				want := map[string]string{"text": "deleted " + dir + "/x\n", "json": `{"type":"deleted","path":"` + dir + `/x"}` + "\n"}[output]
				if b.SendsZxid {
					want = map[string]string{"text": fmt.Sprintf("deleted %s/x zxid=%#x\n", dir, deleted),
						"json": fmt.Sprintf(`{"type":"deleted","path":"%s/x","zxid":%d}`+"\n", dir, deleted)}[output]
				}
				waitOutput(t, out, want)
				if status := stop(); status != exitOK {
					t.Fatalf("watch: status %d", status)
				}
				if err := c.Delete(t.Context(), dir+"/x", -1); err != nil {
					t.Fatal(err)
				}
				if err := c.EnsurePath(t.Context(), dir+"/x"); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestWatchUsage(t *testing.T) {
	t.Parallel()
	expectUsage(t, "zkit watch: ", [][]string{
		{"watch"},
		{"watch", "relative"},
		{"watch", "/a", "/b"},
		{"watch", "/a", "--depth", "-2"},
		{"watch", "/a", "--depth", "-1"}, // not a way to ask for the default
	})
}

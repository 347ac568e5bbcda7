package main

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// The node commands create, read, list, change and delete nodes as zkCli
// does, text escaped, JSON with -o json, on both servers.
func TestNodeCommands(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers, c := b.Addr(), b.Connect(t)
		root := zktest.UniquePath(t)
		run := func(want int, args ...string) result { t.Helper(); return zkitOn(t, servers, want, args...) }

		leaf := root + "/a/b"
		if r := run(exitOK, "create", leaf, "x\ty\n\xff", "--parents"); r.stdout != leaf+"\n" {
			t.Fatalf("create printed %q", r.stdout)
		}
		run(exitFailed, "create", root+"/none/c")
		oneErrorLine(t, run(exitFailed, "create", leaf), "create "+leaf+": the node exists already")
		run(exitOK, "create", root+"/a/c", "plain text")

		if r := run(exitOK, "get", leaf); r.stdout != `"x\ty\n\xff"`+"\n" {
			t.Fatalf("get printed %q", r.stdout)
		}
		if r := run(exitOK, "get", root+"/a/c"); r.stdout != "plain text\n" {
			t.Fatalf("get printed %q", r.stdout)
		}
		var got getJSON
		if r := run(exitOK, "get", leaf, "-o", "json"); json.Unmarshal([]byte(r.stdout), &got) != nil || got.Data != nil || got.DataBase64 != "eAl5Cv8=" || got.Stat.DataLength != 5 {
			t.Fatalf("get -o json printed %q", r.stdout)
		}
		run(exitOK, "get", root+"/a/c", "-o", "json")
		oneErrorLine(t, run(exitFailed, "get", root+"/missing"), "get "+root+"/missing: no such node")

		if r := run(exitOK, "ls", root+"/a"); r.stdout != "b\nc\n" {
			t.Fatalf("ls printed %q", r.stdout)
		}
		if r := run(exitOK, "ls", "-R", root); r.stdout != root+"\n"+root+"/a\n"+leaf+"\n"+root+"/a/c\n" {
			t.Fatalf("ls -R printed %q", r.stdout)
		}
		var ls lsJSON
		if r := run(exitOK, "ls", root+"/a", "-o", "json"); json.Unmarshal([]byte(r.stdout), &ls) != nil || !reflect.DeepEqual(ls, lsJSON{root + "/a", []string{"b", "c"}}) {
			t.Fatalf("ls -o json printed %q", r.stdout)
		}

		run(exitOK, "set", leaf, "v1", "--version", "0")
		oneErrorLine(t, run(exitFailed, "set", leaf, "v2", "--version", "0"), "set "+leaf, "nothing written")
		if d, _, err := c.Get(t.Context(), leaf); err != nil || string(d) != "v1" {
			t.Fatalf("data %q, %v", d, err)
		}
		r := run(exitOK, "stat", leaf)
		for _, w := range []string{"cZxid = 0x", "dataVersion = 1\n", "dataLength = 2\n", "numChildren = 0\n", "ephemeralOwner = 0x0\n"} {
			if !strings.Contains(r.stdout, w) {
				t.Fatalf("stat printed %q: no %q", r.stdout, w)
			}
		}
		var st statOutJSON
		if r := run(exitOK, "stat", root+"/a", "-o", "json"); json.Unmarshal([]byte(r.stdout), &st) != nil || st.Stat.NumChildren != 2 || st.Stat.Czxid == 0 {
			t.Fatalf("stat -o json printed %q", r.stdout)
		}

		oneErrorLine(t, run(exitFailed, "delete", root+"/a"), "has children", "--recursive")
		oneErrorLine(t, run(exitFailed, "delete", leaf, "--version", "0"), "delete "+leaf)
		run(exitOK, "delete", leaf, "--version", "1")
		// Standard input is not a terminal: --recursive needs --yes.
		oneErrorLine(t, run(exitUsage, "delete", root, "--recursive"), "--yes")
		if ok, _, _ := c.Exists(t.Context(), root+"/a/c"); !ok {
			t.Fatal("deleted without --yes")
		}
		run(exitOK, "delete", root, "--recursive", "--yes")
		if ok, _, err := c.Exists(t.Context(), root); ok || err != nil {
			t.Fatalf("%s still there (%v)", root, err)
		}
		oneErrorLine(t, run(exitFailed, "delete", root, "-R", "-y"), "delete "+root+": no such node")
	})
}

// ACLs in zkCli's syntax, set and read back on both servers.
func TestACLCommands(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers, c := b.Addr(), b.Connect(t)
		path := zktest.UniquePath(t)
		if err := c.EnsurePath(t.Context(), path); err != nil {
			t.Fatal(err)
		}
		r := zkit(t, "getacl", path, "--servers", servers)
		if r.status != exitOK || r.stdout != "world:anyone:cdrwa\n" {
			t.Fatalf("getacl: %+v", r)
		}
		digest := client.DigestACL(client.PermRead, "u", "p")[0].ID // u:base64(sha1(u:p))
		acl := "ip:127.0.0.1:cdrwa,digest:" + digest + ":r,world:anyone:r"
		if r := zkit(t, "setacl", path, acl, "--version", "0", "--servers", servers); r.status != exitOK {
			t.Fatalf("setacl: %+v", r)
		}
		r = zkit(t, "getacl", path, "--servers", servers)
		if want := "ip:127.0.0.1:cdrwa\ndigest:" + digest + ":r\nworld:anyone:r\n"; r.stdout != want {
			t.Fatalf("getacl printed %q, want %q", r.stdout, want)
		}
		r = zkit(t, "getacl", path, "-o", "json", "--servers", servers)
		if !strings.HasPrefix(r.stdout, `{"path":"`+path+`","acl":[{"scheme":"ip","id":"127.0.0.1","perms":"cdrwa"},`) {
			t.Fatalf("getacl -o json printed %q", r.stdout)
		}
		r = zkit(t, "setacl", path, "world:anyone:r", "--version", "0", "--servers", servers)
		oneErrorLine(t, r, "setacl "+path)
		if r.status != exitFailed {
			t.Fatalf("setacl with a stale version: %+v", r)
		}
	})
}

// A refusal by an ACL points at the ACL that refused: ZooKeeper checks a
// create's and a delete's permission against the parent's ACL, and
// reading an ACL needs READ or ADMIN on the node, so 'zkit getacl' of the
// node itself would show an ACL that allows it, or fail the same way.
func TestNoAuthNamesTheACLThatRefused(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers, owner := b.Addr(), b.Connect(t, client.WithDigestAuth("owner", "secret"))
		ctx := t.Context()
		dir := zktest.UniquePath(t)
		if err := owner.EnsurePath(ctx, dir+"/open"); err != nil {
			t.Fatal(err)
		}
		private := client.DigestACL(client.PermAll, "owner", "secret")
		if _, err := owner.Create(ctx, dir+"/private", nil, client.Persistent, client.WithACL(private...)); err != nil {
			t.Fatal(err)
		}
		if _, err := owner.SetACL(ctx, dir, append(private, client.WorldACL(client.PermRead)...), -1); err != nil {
			t.Fatal(err)
		}
		parents := "not allowed by the parent's ACL (see 'zkit getacl " + dir + "')"
		oneErrorLine(t, zkitOn(t, servers, exitFailed, "delete", dir+"/open"), "delete "+dir+"/open: "+parents)
		oneErrorLine(t, zkitOn(t, servers, exitFailed, "create", dir+"/new"), "create "+dir+"/new: "+parents)
		r := zkitOn(t, servers, exitFailed, "getacl", dir+"/private")
		oneErrorLine(t, r, "getacl "+dir+"/private: not allowed by the node's ACL", "READ or ADMIN")
		if strings.Contains(r.stderr, "see 'zkit getacl") {
			t.Fatalf("getacl's refusal sends the user to getacl again: %q", r.stderr)
		}
		oneErrorLine(t, zkitOn(t, servers, exitFailed, "set", dir+"/private", "x"),
			"set "+dir+"/private: not allowed by the node's ACL (see 'zkit getacl "+dir+"/private')")
	})
}

func TestParseACL(t *testing.T) {
	t.Parallel()
	acl, err := parseACL("x509:CN=alice,O=example:rw, world:anyone:cdrwa,auth::a")
	want := []client.ACL{
		{Scheme: "x509", ID: "CN=alice,O=example", Perms: client.PermRead | client.PermWrite},
		{Scheme: "world", ID: "anyone", Perms: client.PermAll},
		{Scheme: "auth", ID: "", Perms: client.PermAdmin},
	}
	if err != nil || !reflect.DeepEqual(acl, want) {
		t.Fatalf("parseACL: %v, %v", acl, err)
	}
	for _, bad := range []string{"", "world:anyone", "world:anyone:rx", "world:someone:r", "digest:u:password:r", "ip:::1:r", "nosuch:x:r", "world:anyone:"} {
		if _, err := parseACL(bad); statusOf(err) != exitUsage {
			t.Errorf("parseACL(%q): %v, want a usage error", bad, err)
		}
	}
}

// The root and /zookeeper are never written to or deleted, and nothing is
// sent: no server is reachable here.
func TestNodeCommandsRefuseRootAndZookeeper(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"delete", "/"},
		{"delete", "/", "-R", "--yes"},
		{"delete", "/zookeeper", "-R", "--yes"},
		{"delete", "/zookeeper/quota"},
		{"create", "/zookeeper/x"},
		{"set", "/zookeeper/config", "x"},
		{"set", "/", "x"},
		{"setacl", "/zookeeper", "world:anyone:r"},
		{"set", "/x", "y", "--version", "-2"},
		{"get", "relative"},
		{"ls"},
		{"delete", "/x", "-R", "--version", "1", "--yes"},
		{"delete", "/x", "--yes"},
	} {
		r := zkit(t, append(args, "--servers", "127.0.0.1:1", "--connect-timeout", "100ms")...)
		if r.status != exitUsage {
			t.Errorf("zkit %q: status %d, want %d (%q)", args, r.status, exitUsage, r.stderr)
		}
	}
}

func TestPrintable(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":           "",
		"plain text": "plain text",
		"héllo":      "héllo",
		"a\tb":       `"a\tb"`,
		"line\n":     `"line\n"`,
		"\xff":       `"\xff"`,
		`"quoted"`:   `"\"quoted\""`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %s, want %s", in, got, want)
		}
	}
}

// A namespace (--namespace, $ZKIT_NAMESPACE or the chroot of --servers) at
// or under /zookeeper does not open it to writes: the paths are refused
// as /zookeeper's own would be, before anything is sent.
func TestNamespaceDoesNotOpenZookeeper(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"create", "/x", "--namespace", "/zookeeper"},
		{"delete", "/quota", "-R", "--yes", "--namespace", "/zookeeper"},
		{"set", "/x", "y", "--namespace", "/zookeeper/quota"},
		{"setacl", "/quota", "world:anyone:r", "--namespace", "/zookeeper"},
		{"counter", "/n", "add", "1", "--namespace", "/zookeeper"},
		{"config", "/c", "set", "a=1", "--namespace", "/zookeeper"},
		{"create", "/quota/x", "--servers", "127.0.0.1:1/zookeeper"},
	} {
		if !slices.Contains(args, "--servers") {
			args = append(args, "--servers", "127.0.0.1:1")
		}
		r := zkit(t, append(args, "--connect-timeout", "100ms")...)
		if r.status != exitUsage || !strings.Contains(r.stderr, "/zookeeper is ZooKeeper's own") {
			t.Errorf("zkit %q: status %d, want %d (%q)", args, r.status, exitUsage, r.stderr)
		}
	}
}

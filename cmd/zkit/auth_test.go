package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// setacl's digest example, followed by a write: the ACL id from 'zkit
// digest', then the credentials from --auth-file, --auth or $ZKIT_AUTH,
// on both servers; without them, or with a wrong password, the write is
// refused.
func TestAuthWritesWhatSetACLProtects(t *testing.T) {
	dir := t.TempDir()
	authFile := filepath.Join(dir, "admin")
	if err := os.WriteFile(authFile, []byte("# the admin's\n\ndigest:admin:secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers, c := b.Addr(), b.Connect(t)
		path := zktest.UniquePath(t)
		run := func(want int, args ...string) result { t.Helper(); return zkitOn(t, servers, want, args...) }
		run(exitOK, "create", path, "v1", "--parents")

		id := strings.TrimSpace(run(exitOK, "digest", "admin:secret").stdout)
		if want := client.DigestACL(client.PermAll, "admin", "secret")[0].ID; id != want {
			t.Fatalf("zkit digest printed %q, want %q", id, want)
		}
		if r := zkitIn(t, "admin:secret\n", "digest"); r.status != exitOK || strings.TrimSpace(r.stdout) != id {
			t.Fatalf("zkit digest from stdin: %+v", r)
		}
		run(exitOK, "setacl", path, "digest:"+id+":cdrwa,world:anyone:r")

		oneErrorLine(t, run(exitFailed, "set", path, "v2"), "not allowed by the node's ACL")
		oneErrorLine(t, run(exitFailed, "set", path, "v2", "--auth", "digest:admin:wrong"), "not allowed by the node's ACL")
		run(exitOK, "set", path, "v2", "--auth-file", authFile)
		run(exitOK, "set", path, "v3", "--auth", "digest:someone:else", "--auth", "digest:admin:secret")
		t.Setenv("ZKIT_AUTH", "digest:admin:secret")
		run(exitOK, "set", path, "v4")
		t.Setenv("ZKIT_AUTH", "")
		if d, _, err := c.Get(t.Context(), path); err != nil || string(d) != "v4" {
			t.Fatalf("data %q, %v", d, err)
		}
		// A command that connects by its own wire (watch) sends them too.
		run(exitOK, "setacl", path, "digest:"+id+":cdrwa", "--auth-file", authFile)
		bin := buildZkit(t)
		out, _, stop := background(t, bin, "watch", path, "--depth", "0", "--auth-file", authFile, "--servers", servers)
		waitOutput(t, out, "created "+path+" version=3 ")
		if status := stop(); status != exitOK {
			t.Fatalf("watch: status %d", status)
		}
	})
}

// auth::PERMS grants the session's own identities: with credentials it
// is the digest of each, and the holder writes; without any it is a
// usage error that says what is missing, before anything is sent.
func TestSetACLAuthScheme(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers := b.Addr()
		path := zktest.UniquePath(t)
		run := func(want int, args ...string) result { t.Helper(); return zkitOn(t, servers, want, args...) }
		run(exitOK, "create", path, "--parents")
		oneErrorLine(t, run(exitUsage, "setacl", path, "auth::cdrwa"), "auth::cdrwa", "has none", "--auth digest:USER:PASSWORD", "--tls-cert")
		run(exitOK, "setacl", path, "auth::cdrwa", "--auth", "digest:bob:pw")
		id := client.DigestACL(client.PermAll, "bob", "pw")[0].ID
		if r := run(exitOK, "getacl", path, "--auth", "digest:bob:pw"); r.stdout != "digest:"+id+":cdrwa\n" {
			t.Fatalf("getacl printed %q", r.stdout)
		}
		run(exitFailed, "set", path, "x")
		run(exitOK, "set", path, "x", "--auth", "digest:bob:pw")
	})
}

// A digest entry with a password in place of the hash is refused with a
// way to make the hash that a shell user can run, and the password is
// not said back.
func TestSetACLDigestNeedsTheHash(t *testing.T) {
	r := zkit(t, "setacl", "/x", "digest:admin:hunter2:cdrwa", "--servers", "127.0.0.1:1", "--connect-timeout", "100ms")
	if r.status != exitUsage {
		t.Fatalf("status %d, want %d (%q)", r.status, exitUsage, r.stderr)
	}
	oneErrorLine(t, r, `digest for "admin"`, "USER:HASH", "'zkit digest USER:PASSWORD'")
	if strings.Contains(r.stderr, "hunter2") || strings.Contains(r.stderr, "DigestACL") {
		t.Fatalf("stderr %q says the password, or names a Go function", r.stderr)
	}
}

// Credentials that are not SCHEME:CREDENTIAL are usage errors naming the
// flag, its value's place or the file's line, never the credential.
func TestAuthUsage(t *testing.T) {
	file := filepath.Join(t.TempDir(), "creds")
	if err := os.WriteFile(file, []byte("digest:a:b\nhunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--auth", "digest:a:b", "--auth", "hunter2"}, "--auth (value 2 of 2): want SCHEME:CREDENTIAL"},
		{[]string{"--auth", "digest:hunter2"}, "a digest credential is USER:PASSWORD"},
		{[]string{"--auth", ":hunter2"}, "want SCHEME:CREDENTIAL"},
		{[]string{"--auth-file", file}, "line 2: want SCHEME:CREDENTIAL"},
		{[]string{"--auth-file", filepath.Join(file, "missing")}, "--auth-file: open "},
	} {
		r := zkit(t, append([]string{"get", "/", "--servers", "127.0.0.1:1", "--connect-timeout", "100ms"}, tc.args...)...)
		if r.status != exitUsage {
			t.Errorf("zkit %q: status %d, want %d (%q)", tc.args, r.status, exitUsage, r.stderr)
			continue
		}
		oneErrorLine(t, r, tc.says)
		if strings.Contains(r.stderr, "hunter2") {
			t.Errorf("zkit %q says the credential: %q", tc.args, r.stderr)
		}
	}
	t.Setenv("ZKIT_AUTH", "hunter2")
	r := zkit(t, "get", "/", "--servers", "127.0.0.1:1")
	if r.status != exitUsage || strings.Contains(r.stderr, "hunter2") {
		t.Fatalf("ZKIT_AUTH=hunter2: %+v", r)
	}
	oneErrorLine(t, r, "$ZKIT_AUTH (value 1 of 1)")
}

// Credentials of a scheme the servers have no provider for are refused
// by them: a failure that says so, not a wait for --connect-timeout.
func TestAuthRefusedByTheServers(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		r := zkitOn(t, b.Addr(), exitFailed, "get", "/", "--auth", "nosuch:hunter2", "--connect-timeout", "30s")
		oneErrorLine(t, r, "the servers refused the credentials of --auth (nosuch)", "digest:USER:PASSWORD")
		if strings.Contains(r.stderr, "hunter2") {
			t.Fatalf("stderr says the credential: %q", r.stderr)
		}
	})
}

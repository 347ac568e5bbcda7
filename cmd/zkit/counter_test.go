package main

import (
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/zktest"
)

func TestCounterCommand(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	path := zktest.UniquePath(t) + "/builds"
	for _, tc := range []struct {
		args   []string
		status int
		stdout string
	}{
		{[]string{"get"}, exitOK, "0\n"},
		{[]string{"add", "5"}, exitOK, "5\n"},
		{[]string{"add", "--", "-7"}, exitOK, "-2\n"},
		{[]string{"set", "10"}, exitOK, "10\n"},
		{[]string{"cas", "10", "11"}, exitOK, "11\n"},
		{[]string{"cas", "10", "12"}, exitFailed, "11\n"},
		{[]string{"get"}, exitOK, "11\n"},
	} {
		args := append([]string{"counter", path, "--servers", servers}, tc.args...)
		r := zkit(t, args...)
		if r.status != tc.status || r.stdout != tc.stdout {
			t.Fatalf("zkit %q: status %d, stdout %q, stderr %q; want %d, %q", args, r.status, r.stdout, r.stderr, tc.status, tc.stdout)
		}
		if tc.status == exitFailed {
			oneErrorLine(t, r, "zkit counter: ", path+" holds 11, not 10", "nothing written")
		}
	}
	// The data is Curator's DistributedAtomicLong layout.
	if d, _, err := c.Get(ctx, path); err != nil || string(d) != "\x00\x00\x00\x00\x00\x00\x00\x0b" {
		t.Fatalf("data %x, %v", d, err)
	}

	// Another encoding on the same node: refused, nothing written.
	r := zkit(t, "counter", path, "--servers", servers, "--encoding", "int", "add", "1")
	if r.status != exitFailed || r.stdout != "" {
		t.Fatalf("int encoding on a long counter: status %d, stdout %q", r.status, r.stdout)
	}
	oneErrorLine(t, r, path, "8 bytes", "--encoding int", "nothing written")
	if d, _, _ := c.Get(ctx, path); len(d) != 8 {
		t.Fatalf("data rewritten: %x", d)
	}
	text := path + "-text"
	if r := zkit(t, "counter", text, "--servers", servers, "--encoding", "text", "add", "42"); r.status != exitOK || r.stdout != "42\n" {
		t.Fatalf("text counter: %+v", r)
	}
	if d, _, err := c.Get(ctx, text); err != nil || string(d) != "42" {
		t.Fatalf("text data %q, %v", d, err)
	}
	small := path + "-int"
	zkit(t, "counter", small, "--servers", servers, "--encoding", "int", "set", "2147483647")
	r = zkit(t, "counter", small, "--servers", servers, "--encoding", "int", "add", "1")
	if r.status != exitFailed {
		t.Fatalf("overflow: status %d", r.status)
	}
	oneErrorLine(t, r, "overflows", "nothing was written")
}

func TestCounterCommandUsage(t *testing.T) {
	t.Parallel()
	servers, c, ctx := env(t)
	base := zktest.UniquePath(t)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"counter"}, "missing PATH"},
		{[]string{"counter", base + "/x"}, "missing get, add, set or cas"},
		{[]string{"counter", base + "/x", "incr"}, `unknown counter operation "incr"`},
		{[]string{"counter", base + "/x", "add"}, "add takes 1 number(s), got 0"},
		{[]string{"counter", base + "/x", "cas", "1"}, "cas takes 2 number(s), got 1"},
		{[]string{"counter", base + "/x", "add", "one"}, `"one" is not a 64-bit integer`},
		{[]string{"counter", base + "/x", "add", "-5"}, `put negative numbers after "--"`},
		{[]string{"counter", "x", "get"}, "invalid PATH"},
		{[]string{"counter", base + "/x", "--encoding", "float", "get"}, "want long, int or text"},
		{[]string{"counter", base + "/x", "--encoding", "int", "set", "4294967296"}, "does not fit the int encoding"},
	} {
		r := zkit(t, append(tc.args, "--servers", servers)...)
		if r.status != exitUsage {
			t.Fatalf("zkit %q: status %d (%q), want %d", tc.args, r.status, r.stderr, exitUsage)
		}
		oneErrorLine(t, r, "zkit counter: ", tc.says)
		if !strings.Contains(r.stderr, "--help") {
			t.Fatalf("usage error without the help hint: %q", r.stderr)
		}
	}
	if ok, _, err := c.Exists(ctx, base+"/x"); ok || err != nil {
		t.Fatalf("bad input created the node (%v)", err)
	}
}

// A value that --encoding int cannot store is a usage error found before
// zkit connects, as a value that is no 64-bit integer is: it does not
// depend on what the servers hold.
func TestCounterValueOutsideEncodingIsUsageBeforeConnecting(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"counter", "/c", "set", "3000000000", "--encoding", "int"},
		{"counter", "/c", "cas", "0", "3000000000", "--encoding", "int"},
		{"counter", "/c", "cas", "--encoding", "int", "--", "-3000000000", "0"},
	} {
		r := zkit(t, append([]string{"--servers", "127.0.0.1:1", "--connect-timeout", "200ms"}, args...)...)
		if r.status != exitUsage {
			t.Errorf("zkit %q: status %d, want %d (%q)", args, r.status, exitUsage, r.stderr)
			continue
		}
		oneErrorLine(t, r, "3000000000", "int")
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// set and create take their data from standard input (-) or a file
// (--file), any bytes, NUL included, up to the most a node takes, on both
// servers: values above the 128 KiB an argument may have.
func TestDataFromStdinAndFile(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers, c := b.Addr(), b.Connect(t)
		path := zktest.UniquePath(t) + "/node"
		most := client.MaxData(path)
		if most < 1<<20-1024 {
			t.Fatalf("MaxData(%s) = %d: not 1 MiB less a little", path, most)
		}
		value := binaryValue(most, 0)
		check := func(want []byte) {
			t.Helper()
			got, _, err := c.Get(t.Context(), path)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("the node holds %d bytes (%v), want the %d written", len(got), err, len(want))
			}
		}
		if r := zkitIn(t, string(value), "create", path, "-", "--parents", "--servers", servers); r.status != exitOK || r.stdout != path+"\n" {
			t.Fatalf("create - of %d bytes: %+v", len(value), r)
		}
		check(value)

		file := filepath.Join(t.TempDir(), "value")
		other := binaryValue(most, 7)
		if err := os.WriteFile(file, other, 0o600); err != nil {
			t.Fatal(err)
		}
		zkitOn(t, servers, exitOK, "set", path, "--file", file)
		check(other)
		if r := zkitIn(t, "a\x00b", "set", path, "-", "--servers", servers); r.status != exitOK {
			t.Fatalf("set -: %+v", r)
		}
		check([]byte("a\x00b"))

		// One byte more is refused before anything is sent.
		over := string(binaryValue(most+1, 3))
		r := zkitIn(t, over, "set", path, "-", "--servers", servers)
		if r.status != exitUsage {
			t.Fatalf("set - of %d bytes: %+v", most+1, r)
		}
		oneErrorLine(t, r, "standard input: more than "+strconv.Itoa(most)+" bytes", "jute.maxbuffer", "nothing sent")
		if err := os.WriteFile(file, []byte(over), 0o600); err != nil {
			t.Fatal(err)
		}
		oneErrorLine(t, zkitOn(t, servers, exitUsage, "create", path+"2", "--file", file), "--file "+file+": more than")
		check([]byte("a\x00b"))
	})
}

// Data that is too large, or given twice, or missing, is a usage error
// before any server is reached.
func TestDataUsage(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(file, make([]byte, client.DefaultMaxBuffer), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		stdin string
		args  []string
		says  string
	}{
		{string(make([]byte, client.DefaultMaxBuffer)), []string{"set", "/x", "-"}, "standard input: more than"},
		{"", []string{"set", "/x", "--file", file}, "--file " + file + ": more than"},
		{"", []string{"create", "/x", "--file", file}, "more than"},
		{"", []string{"set", "/x", string(make([]byte, client.DefaultMaxBuffer))}, "DATA: more than"},
		{"", []string{"set", "/x", "d", "--file", file}, "DATA and --file exclude each other"},
		{"", []string{"set", "/x"}, "missing DATA"},
		{"", []string{"set", "/x", "--file", filepath.Join(file, "missing")}, "--file: open "},
	} {
		r := zkitIn(t, tc.stdin, append(tc.args, "--servers", "127.0.0.1:1", "--connect-timeout", "100ms")...)
		if r.status != exitUsage {
			t.Errorf("zkit %.40q: status %d, want %d (%q)", tc.args, r.status, exitUsage, r.stderr)
			continue
		}
		oneErrorLine(t, r, tc.says)
	}
}

// binaryValue is n bytes of every value, NUL among them, from seed on.
func binaryValue(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + seed)
	}
	return b
}

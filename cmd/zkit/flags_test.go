package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Bad flag values are usage errors before anything starts: no server is
// needed, and none is waited for.
func TestBadFlagValuesAreUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	quick := []string{"--dur", "100ms", "--warmup", "0", "--workloads", "W4", "--clients", "1"} // should the check fail
	for _, args := range [][]string{
		{"lock", "/x", "--servers", "", "--", "true"},
		{"lock", "/x", "--servers", " , ", "--", "true"},
		{"lock", "/x", "--servers", "127.0.0.1:99999", "--", "true"},
		{"lock", "/x", "--servers", "127.0.0.1:0", "--", "true"},
		{"lock", "/x", "--servers", "127.0.0.1:http", "--", "true"},
		{"lock", "/x", "--servers", ":2181", "--", "true"},
		{"version", "--servers", "127.0.0.1:99999"},
		{"lock", "/x", "--wait", "0s", "--", "true"},
		{"lock", "/x", "--wait", "-1s", "--", "true"},
		{"lock", "/x", "--wait", "never", "--", "true"},
		{"elect", "/x", "--wait", "0", "--", "true"},
		{"semaphore", "/x", "--max", "2", "--wait", "0s", "--", "true"},
		{"barrier", "/x", "--count", "2", "--wait", "0s", "--", "true"},
		{"rendezvous", "/x", "wait", "--wait", "0s"},
		{"config", "/x", "get", "--wait", "0s"},
		{"serve", "--tick-time", "0s"},
		{"bench", "--dur", "100ms", "--warmup", "0", "--workloads", "W4", "--clients", "1,65"},
		append([]string{"bench", "--plot", dir}, quick...), // a directory
		append([]string{"bench", "--plot", filepath.Join(dir, "missing", "plot.png")}, quick...),
		{"counter", "/", "add", "1"},
		{"counter", "/zookeeper/quota", "set", "1"},
		{"config", "/zookeeper/config", "set", "a=1"},
		{"get", "/", "--servers", "127.0.0.1:1", "--session-timeout", "597h"}, // more milliseconds than 32 bits hold
	} {
		began := time.Now()
		r := zkit(t, args...)
		if r.status != exitUsage {
			t.Errorf("zkit %q: status %d, want %d (%q)", args, r.status, exitUsage, r.stderr)
			continue
		}
		if d := time.Since(began); d > 5*time.Second {
			t.Errorf("zkit %q took %v: not refused before it started", args, d)
		}
		oneErrorLine(t, r)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the --plot check left files behind: %v", entries)
	}
}

// --wait forever is the explicit no-limit; a plot file that can be written
// is left as it was found.
func TestWaitForeverAndWritablePlot(t *testing.T) {
	t.Parallel()
	servers, _, _ := env(t)
	if r := zkitOn(t, servers, exitOK, "lock", "/w", "--wait", "forever", "--", "true"); r.stderr != "" {
		t.Fatalf("stderr %q", r.stderr)
	}
	plot := filepath.Join(t.TempDir(), "plot.png")
	if err := checkWritable(plot); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(plot); !os.IsNotExist(err) {
		t.Fatalf("checkWritable left %s behind (%v)", plot, err)
	}
}

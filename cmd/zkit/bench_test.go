package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// zkit bench prints the anchors' lines, zkit's ratio to each baseline, and
// a PNG plot.
func TestBench(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "bench.png")
	r := zkit(t, "bench", "--warmup", "0", "--dur", "200ms", "--clients", "1,4", "--workloads", "W1,W4", "--baseline", "--plot", plot)
	if r.status != 0 {
		t.Fatalf("status %d: %s", r.status, r.stderr)
	}
	points := 0
	for _, line := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(line)
		if len(f) != 8 || strings.HasPrefix(line, "#") {
			continue
		}
		points++
		if rate, err := strconv.ParseFloat(f[5], 64); err != nil || rate <= 0 {
			t.Errorf("no rate in %q", line)
		}
	}
	// W1: zkit.Lock, zkit.RWLock, gozk.Lock; W4: zkit.raw, gozk.raw; at 2 client counts.
	if points != 10 {
		t.Errorf("%d result lines, want 10:\n%s", points, r.stdout)
	}
	for _, want := range []string{"# ratio W1_lock 4 zkit.Lock/gozk.Lock = ", "mutual_exclusion=ok", "rx_per_op=", "the client, not the server, is the bottleneck"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in:\n%s", want, r.stdout)
		}
	}
	png, err := os.ReadFile(plot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("plot: %v, %d bytes", err, len(png))
	}
}

func TestBenchBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--workloads", "W9"},
		{"--clients", "0"},
		{"--clients", "x"},
		{"--dur", "0s"},
	} {
		if r := zkit(t, append([]string{"bench"}, args...)...); r.status != exitUsage {
			t.Errorf("zkit bench %q: status %d, want %d", args, r.status, exitUsage)
		}
	}
}

package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/zkit-dev/zkit/zktest"
)

// zkit bench prints the anchors' lines, zkit's ratio to each baseline, and
// a PNG plot.
func TestBench(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plot := filepath.Join(dir, "bench.png")
	anchor := filepath.Join(dir, "curator.txt") // the anchors' format, with a W2 point zkit does not run here
	if err := os.WriteFile(anchor, []byte("# host: ...\ncurator.raw W4_createdelete 4 1000 2.000 500.0 0.6 0.9\n# stats curator.raw ...\ncurator.SharedCount W2_counter 4 100 1.000 100.0 1 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := zkit(t, "bench", "--warmup", "0", "--dur", "200ms", "--clients", "1,4", "--workloads", "W1,W4", "--baseline", "--compare", anchor, "--plot", plot)
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
	if strings.Contains(r.stdout, "SharedCount") {
		t.Errorf("a compared workload that was not run reached the ratios:\n%s", r.stdout)
	}
	for _, want := range []string{"# ratio W1_lock 4 zkit.Lock/gozk.Lock = ", "# ratio W4_createdelete 4 zkit.raw/curator.raw = ", "mutual_exclusion=ok", "rx_per_op=", "the client, not the server, is the bottleneck"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in:\n%s", want, r.stdout)
		}
	}
	png, err := os.ReadFile(plot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("plot: %v, %d bytes", err, len(png))
	}
}

// --csv prints a header and a row per point, commentary on stderr.
func TestBenchCSV(t *testing.T) {
	t.Parallel()
	r := zkit(t, "bench", "--warmup", "0", "--dur", "200ms", "--clients", "1,2", "--workloads", "W4", "--csv")
	if r.status != 0 {
		t.Fatalf("status %d: %s", r.status, r.stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, r.stdout)
	}
	if len(rows) != 3 || rows[0][0] != "impl" || rows[1][1] != "W4_createdelete" || rows[2][2] != "2" {
		t.Fatalf("rows %q, want a header and W4 at 1 and 2 clients", rows)
	}
	if rate, err := strconv.ParseFloat(rows[1][5], 64); err != nil || rate <= 0 {
		t.Fatalf("no rate in %q", rows[1])
	}
	if !strings.Contains(r.stderr, "# zkit bench") {
		t.Fatalf("commentary not on stderr: %q", r.stderr)
	}
	if r := zkit(t, "bench", "--csv", "-o", "json"); r.status != exitUsage {
		t.Fatalf("--csv with -o json: status %d, want %d", r.status, exitUsage)
	}
}

func TestBenchBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--workloads", "W9"},
		{"--clients", "0"},
		{"--clients", "x"},
		{"--dur", "0s"},
		{"--compare", "/nonexistent/anchor.txt"},
		{"--compare", "bench_test.go"},
	} {
		if r := zkit(t, append([]string{"bench"}, args...)...); r.status != exitUsage {
			t.Errorf("zkit bench %q: status %d, want %d", args, r.status, exitUsage)
		}
	}
}

// Against an ensemble of its own (--servers), bench creates its nodes
// under a root of the run's and deletes it when the run ends: as the demo
// does, it leaves nothing behind.
func TestBenchCleansUp(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		r := zkitOn(t, b.Addr(), exitOK, "bench", "--warmup", "0", "--dur", "100ms", "--clients", "2", "--workloads", "W1,W4", "--baseline")
		root := benchRoot(t, r.stdout)
		if !strings.Contains(r.stdout, "zkit.raw W4_createdelete 2 ") || !strings.Contains(r.stdout, "gozk.Lock W1_lock 2 ") {
			t.Fatalf("the points did not run:\n%s", r.stdout)
		}
		if ok, _, err := c.Exists(t.Context(), root); ok || err != nil {
			t.Fatalf("%s left behind (%v)", root, err)
		}
	})
}

// A run stopped by SIGINT deletes its nodes too, and exits 130.
func TestBenchCleansUpWhenStopped(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		p := start(t, bin, "bench", "--servers", b.Addr(), "--warmup", "0", "--dur", "10m", "--clients", "1", "--workloads", "W4")
		var root string
		p.waitFor(t, "print its root", func() bool {
			first, _, ok := strings.Cut(p.stdout.String(), "\n")
			if ok {
				root = benchRoot(t, first)
			}
			return ok
		})
		p.waitFor(t, "create its nodes", func() bool {
			kids, _, _ := c.Children(t.Context(), root+"/zkit/raw")
			return len(kids) > 0
		})
		p.cmd.Process.Signal(syscall.SIGINT)
		if status := p.wait(t); status != 130 {
			t.Fatalf("status %d after SIGINT, want 130 (stderr %q)", status, p.stderr.String())
		}
		if ok, _, err := c.Exists(t.Context(), root); ok || err != nil {
			t.Fatalf("%s left behind after SIGINT (%v)", root, err)
		}
	})
}

// benchRoot is the root bench says its run's nodes are under.
func benchRoot(t *testing.T, out string) string {
	t.Helper()
	_, after, ok := strings.Cut(out, " under ")
	root, _, _ := strings.Cut(after, " ")
	if !ok || !strings.HasPrefix(root, "/bench/run-") {
		t.Fatalf("bench does not say where its nodes are: %q", out)
	}
	return root
}

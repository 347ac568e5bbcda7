package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/zkit-dev/zkit/cmd/zkit/internal/workload"
)

// readResults reads the result lines of another benchmark's output in the
// anchors' format ("impl workload clients ops seconds ops_per_sec p50_ms
// p99_ms"), so that Curator's and kazoo's figures from the same sitting join
// zkit's ratios and plot. Diagnostic lines ("#") and blank lines are skipped;
// any other line that does not parse is an error naming the file and line.
func readResults(file string) ([]*workload.Result, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*workload.Result
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r, err := parseResult(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, n, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

func parseResult(line string) (*workload.Result, error) {
	f := strings.Fields(line)
	if len(f) != 8 {
		return nil, fmt.Errorf("want 8 fields (impl workload clients ops seconds ops_per_sec p50_ms p99_ms), got %d", len(f))
	}
	clients, err1 := strconv.Atoi(f[2])
	ops, err2 := strconv.ParseInt(f[3], 10, 64)
	secs, err3 := strconv.ParseFloat(f[4], 64)
	if err1 != nil || err2 != nil || err3 != nil || clients <= 0 || secs < 0 {
		return nil, fmt.Errorf("bad clients, ops or seconds in %q", line)
	}
	return &workload.Result{Impl: f[0], Workload: f[1], Clients: clients, Ops: ops, Seconds: secs}, nil
}

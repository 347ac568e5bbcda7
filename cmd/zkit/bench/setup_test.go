package bench

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/workload"
	"github.com/zkit-dev/zkit/zktest"
)

func TestMain(m *testing.M) { os.Exit(zktest.Main(m)) }

// servers returns the ensemble to measure: $ZKIT_BENCH_SERVERS, or the
// shared real ZooKeeper.
func servers(b *testing.B) []string {
	if s := os.Getenv("ZKIT_BENCH_SERVERS"); s != "" {
		return strings.Split(s, ",")
	}
	return zktest.SharedZooKeeper(b).Servers()
}

// connectN opens n sessions (30 s timeout, as the anchors) and closes them
// when the benchmark ends.
func connectN(b *testing.B, srv []string, n int) []*client.Client {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := make([]*client.Client, n)
	for i := range cs {
		c, err := client.Connect(ctx, srv, client.WithSessionTimeout(30*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		cs[i] = c
	}
	b.Cleanup(func() {
		for _, c := range cs {
			c.Close()
		}
	})
	return cs
}

var runSeq int

// freshPath returns a path no earlier point used.
func freshPath(b *testing.B, c *client.Client, what string) string {
	runSeq++
	p := fmt.Sprintf("/bench/zkit/%s/%d-%d", what, time.Now().UnixNano(), runSeq)
	if err := c.EnsurePath(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	return p
}

// packets sums zk_packets_received and zk_packets_sent over the servers'
// mntr answers.
func packets(b *testing.B, srv []string) (rx, tx int64) {
	for _, s := range srv {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		out, err := zktest.FourLetterWord(ctx, s, "mntr")
		cancel()
		if err != nil {
			b.Fatalf("mntr %s: %v", s, err)
		}
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			v, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "zk_packets_received":
				rx += v
			case "zk_packets_sent":
				tx += v
			}
		}
	}
	return rx, tx
}

// percentile is the nearest-rank percentile of sorted latencies, in ms
// (the anchors' rule).
func percentile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	k := int(float64(len(sorted))*q+0.999999) - 1
	k = max(0, min(k, len(sorted)-1))
	return float64(sorted[k]) / float64(time.Millisecond)
}

func sortDurations(d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
}

// measure runs spec with clients for b.N operations and reports the
// anchors' figures as metrics: rate (named unit), p50 and p99, server
// packets per operation, client CPU (and the servers' with
// $ZKIT_BENCH_PIDS).
func measure(b *testing.B, spec workload.Spec, clients int, unit string) {
	p := workload.Point{Servers: servers(b), Clients: clients, Budget: b.N}
	if spec.Rounds {
		p.Budget, p.Rounds = 0, b.N // every client runs b.N rounds
	}
	for _, pid := range strings.FieldsFunc(os.Getenv("ZKIT_BENCH_PIDS"), func(r rune) bool { return r == ',' || r == ' ' }) {
		n, _ := strconv.Atoi(pid)
		p.PIDs = append(p.PIDs, n)
	}
	b.ResetTimer()
	r, err := workload.Run(context.Background(), spec, p)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range r.Notes {
		if strings.Contains(n, "VIOLATED") || strings.Contains(n, "MISMATCH") {
			b.Fatal(n)
		}
	}
	if r.Errors > 0 {
		b.Fatalf("%d operations failed", r.Errors)
	}
	b.ReportMetric(r.Rate(), unit)
	b.ReportMetric(r.Percentile(0.50), "p50-ms")
	b.ReportMetric(r.Percentile(0.99), "p99-ms")
	b.ReportMetric(r.RxPerOp(), "rx-pkts/op")
	b.ReportMetric(float64(r.Tx)/float64(max(r.Ops, 1)), "tx-pkts/op")
	b.ReportMetric(100*r.ClientCPU/r.Seconds, "client-cpu-%")
	if r.ServerCPU > 0 {
		b.ReportMetric(100*r.ServerCPU/r.Seconds, "server-cpu-%")
	}
}

package workload

import (
	"fmt"
	"io"
	"math"
	"time"
)

// Result is one measured point.
type Result struct {
	Impl     string // "zkit.Lock", "gozk.Lock", ...
	Workload string // "W1_lock", ...
	Clients  int
	Ops      int64           // counted operations
	Seconds  float64         // wall time until the last client finished
	Lat      []time.Duration // one sample per operation, sorted
	Errors   int64
	Notes    []string // correctness checks and caveats

	ServerCPU, ClientCPU float64 // CPU seconds over the point (0: unknown)
	Rx, Tx               int64   // server packets received and sent (summed over servers)
}

// Rate is operations per second.
func (r *Result) Rate() float64 {
	if r.Seconds == 0 {
		return 0
	}
	return float64(r.Ops) / r.Seconds
}

// Percentile is the nearest-rank q-quantile of the latencies in
// milliseconds (the anchors' rule), NaN without samples.
func (r *Result) Percentile(q float64) float64 {
	if len(r.Lat) == 0 {
		return math.NaN()
	}
	k := int(math.Ceil(q*float64(len(r.Lat)))) - 1
	k = max(0, min(k, len(r.Lat)-1))
	return float64(r.Lat[k]) / float64(time.Millisecond)
}

// RxPerOp is the number of client requests the servers saw per operation.
func (r *Result) RxPerOp() float64 {
	if r.Ops == 0 {
		return math.NaN()
	}
	return float64(r.Rx) / float64(r.Ops)
}

// Write prints the point in the anchors' format: the result line, then
// "# stats" and "# note" lines.
func (r *Result) Write(w io.Writer) {
	fmt.Fprintf(w, "%s %s %d %d %.3f %.1f %.3f %.3f\n", r.Impl, r.Workload, r.Clients, r.Ops, r.Seconds,
		r.Rate(), r.Percentile(0.50), r.Percentile(0.99))
	pct := func(cpu float64) float64 { return 100 * cpu / r.Seconds }
	fmt.Fprintf(w, "# stats %s %s %d srv_cpu=%.2fs (%.0f%%) cli_cpu=%.2fs (%.0f%%) wall=%.2fs srv_pkts_rx=%d srv_pkts_tx=%d rx_per_op=%.2f p999_ms=%.3f max_ms=%.3f errors=%d\n",
		r.Impl, r.Workload, r.Clients, r.ServerCPU, pct(r.ServerCPU), r.ClientCPU, pct(r.ClientCPU),
		r.Seconds, r.Rx, r.Tx, r.RxPerOp(), r.Percentile(0.999), r.Percentile(1), r.Errors)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "# note %s %s %d %s\n", r.Impl, r.Workload, r.Clients, n)
	}
}

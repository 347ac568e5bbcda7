package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/workload"
	"github.com/zkit-dev/zkit/zktest"
)

// benchWorkloads are zkit's implementations of each workload, and
// benchBaselines what --baseline runs beside them.
var (
	benchWorkloads = map[string][]workload.Spec{
		"W1":  {workload.Lock(), workload.RWLock()},
		"W1S": {workload.LockShared()},
		"W2":  {workload.Counter()},
		"W3":  {workload.DoubleBarrier(), workload.DoubleBarrierReuse()},
		"W4":  {workload.Raw()},
		"W5":  {workload.Election()},
	}
	benchBaselines = map[string][]workload.Spec{
		"W1":  {workload.GozkLock()},
		"W1S": {workload.GozkLockShared()},
		"W2":  {workload.GozkCounter()},
		"W4":  {workload.GozkRaw()},
		"W5":  {workload.GozkFailover()},
	}
)

// maxBenchClients is the most clients a point may have.
const maxBenchClients = 64

type benchFlags struct {
	workloads string
	clients   string
	dur       time.Duration
	rounds    int
	baseline  bool
	plot      string
	pids      string
	warmup    time.Duration
	compare   []string
	csv       bool
}

func newBenchCmd(a *app) *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench [--workloads W1,W2,...] [--clients 1,8,32] [--dur D] [--baseline] [--compare FILES] [--plot FILE.png]",
		Short: "Measure the recipes on the anchors' workloads, beside go-zookeeper's baselines",
		Long: `Runs the benchmark workloads of bench/anchors (W1 lock handoffs, W1S the same with 32
goroutines over 4 sessions and lock combining, W2 contended counter, W3 double barrier
rounds, W4 raw create+delete, W5 leader failover) and prints one line per point in the
anchors' format:

  impl workload clients ops seconds ops_per_sec p50_ms p99_ms

followed by "# stats" (server and client CPU, the servers' own packet counters from
mntr, packets received per operation) and "# note" (correctness checks) lines.

--baseline runs go-zookeeper's zk.Lock and the naive Get+Set counter loop in the same
run, and prints zkit's ratio to each: compare ratios from one run, never absolute
figures across runs. --compare adds the result lines of other benchmarks run against
the same server in the same sitting (the anchors' Curator and kazoo programs write this
format) to the ratios and the plot. --plot draws operations/s against clients.

Without --servers it measures against the embedded reference server, where the client,
not the server, is the bottleneck: those are not ZooKeeper's numbers. Measure against a
real ensemble (--servers, and --pids with its process ids for the server CPU column).
There the run's nodes go under /bench/run-N (its first line says which), deleted when
the run ends, also when it fails or is stopped (/bench too, once empty).

With -o json stdout has one JSON object per point (impl, workload, clients, ops,
seconds, ops_per_sec, p50_ms, p99_ms, p999_ms, max_ms, errors, srv_cpu_s, cli_cpu_s,
srv_pkts_rx, srv_pkts_tx, notes), and the "#" lines go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.bench(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.workloads, "workloads", "W1,W1S,W2,W3,W4,W5", "workloads to run")
	fl.StringVar(&f.clients, "clients", "1,8,32", fmt.Sprintf("client counts (each client its own session, up to %d)", maxBenchClients))
	fl.DurationVar(&f.dur, "dur", 10*time.Second, "duration of each point")
	fl.IntVar(&f.rounds, "rounds", 300, "rounds of the round-based workloads (W3)")
	fl.BoolVar(&f.baseline, "baseline", false, "also run go-zookeeper's baselines and print zkit's ratio to them")
	fl.StringVar(&f.plot, "plot", "", "draw ops/s against clients into this PNG file")
	fl.BoolVar(&f.csv, "csv", false, "print the points as CSV (a header, then a row per point; commentary on stderr)")
	fl.DurationVar(&f.warmup, "warmup", 2*time.Second, "unreported warm-up before the first point (W4 with 1 client, then W1 with 8)")
	fl.StringVar(&f.pids, "pids", "", "process ids of the servers, for their CPU (comma separated)")
	fl.StringSliceVar(&f.compare, "compare", nil, "files of result lines in the anchors' format to compare with (comma separated)")
	return cmd
}

func (a *app) bench(ctx context.Context, f benchFlags) error {
	clients, err := intList("--clients", f.clients)
	if err != nil {
		return err
	}
	pids, err := intList("--pids", f.pids)
	if err != nil {
		return err
	}
	if f.dur <= 0 || f.rounds <= 0 {
		return usagef("--dur and --rounds must be positive")
	}
	if n := slices.Max(append(clients, 0)); n > maxBenchClients {
		return usagef("--clients %d: at most %d (each client is a session of its own)", n, maxBenchClients)
	}
	if f.plot != "" {
		if err := checkWritable(f.plot); err != nil {
			return usagef("--plot: %v", err)
		}
	}
	var others []*workload.Result
	for _, file := range f.compare {
		rs, err := readResults(file)
		if err != nil {
			return usagef("--compare: %v", err)
		}
		others = append(others, rs...)
	}
	var names []string
	for _, w := range strings.Split(f.workloads, ",") {
		w = strings.TrimSpace(w)
		if _, ok := benchWorkloads[w]; !ok && benchBaselines[w] == nil {
			return usagef("--workloads: unknown workload %q (W1 to W5, W1S)", w)
		}
		names = append(names, w)
	}

	// With -o json, stdout has the points alone, one JSON object each;
	// the commentary ("#" lines) goes to stderr.
	info := a.stdout
	if a.json() || f.csv {
		info = a.stderr
	}
	if a.json() && f.csv {
		return usagef("--csv and -o json exclude each other")
	}
	var table *csv.Writer
	if f.csv {
		table = csv.NewWriter(a.stdout)
		table.Write(csvHeader)
		defer table.Flush()
	}
	p := workload.Point{Duration: f.dur, Rounds: f.rounds, PIDs: pids, Auth: a.creds}
	if a.servers != "" {
		if p.Servers, err = a.serverList(); err != nil {
			return err
		}
		// Every node of the run goes under a root of its own, deleted
		// when the run ends, however it ends (a failed point, a stop
		// signal), as the demo deletes its tree.
		p.Root = fmt.Sprintf("%s/run-%d", workload.DefaultRoot, time.Now().UnixNano())
		defer a.cleanupBench(p)
		fmt.Fprintf(info, "# zkit bench against %s, %v per point, under %s (deleted at the end), %s\n",
			strings.Join(p.Servers, ","), f.dur, p.Root, versionLine())
	} else {
		srv, err := zktest.StartServer("127.0.0.1:0")
		if err != nil {
			return failf("cannot start the embedded server: %v", err)
		}
		defer srv.Close()
		p.Servers = srv.Servers()
		fmt.Fprintf(info, "# zkit bench against the embedded reference server, %v per point, %s\n", f.dur, versionLine())
		fmt.Fprintln(info, "# note: on the embedded server the client, not the server, is the bottleneck: these are not ZooKeeper's numbers; measure a real ensemble with --servers")
	}
	warmUp(ctx, p, f.warmup)

	var results []*workload.Result
	for _, w := range names {
		specs := benchWorkloads[w]
		if f.baseline {
			specs = append(specs[:len(specs):len(specs)], benchBaselines[w]...)
		}
		if len(specs) == 0 {
			fmt.Fprintf(info, "# %s: no implementation yet\n", w)
			continue
		}
		for _, n := range clients {
			for _, s := range specs {
				q := p
				q.Clients = n
				if s.Clients > 0 { // defined at one count only: run once
					q.Clients = s.Clients
					if n != clients[0] {
						continue
					}
				}
				r, err := workload.Run(ctx, s, q)
				if err != nil {
					return failf("%v", err)
				}
				if table != nil {
					table.Write(csvRow(r))
					table.Flush()
				} else if err := a.writeResult(r); err != nil {
					return err
				}
				results = append(results, r)
			}
		}
	}
	for _, o := range others { // only the workloads measured here
		if slices.ContainsFunc(results, func(r *workload.Result) bool { return r.Workload == o.Workload }) {
			results = append(results, o)
		}
	}
	if f.baseline || len(others) > 0 {
		printRatios(info, results)
	}
	if f.plot != "" {
		if err := plotResults(f.plot, results); err != nil {
			return failf("--plot %s: %v", f.plot, err)
		}
		fmt.Fprintf(info, "# plot written to %s\n", f.plot)
	}
	return nil
}

// cleanupBench deletes the run's tree under p.Root on an external
// ensemble, and DefaultRoot with it when nothing else is left there. It
// says on stderr what it could not delete.
func (a *app) cleanupBench(p workload.Point) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	root := p.Root
	err := func() error {
		c, err := client.Connect(ctx, p.Servers, p.ClientOptions()...)
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := deleteSubtree(ctx, c, root); err != nil && !errors.Is(err, client.ErrNoNode) {
			return err
		}
		c.Delete(ctx, workload.DefaultRoot, -1) // not when other runs' or anyone's nodes are there
		return nil
	}()
	if err != nil {
		fmt.Fprintf(a.stderr, "zkit bench: the run's nodes are left under %s (%s); delete them with 'zkit delete %s --recursive --yes'\n",
			root, oneLine(err), root)
	}
}

// writeResult prints one point: in the anchors' format, or with -o json
// as one object.
func (a *app) writeResult(r *workload.Result) error {
	if !a.json() {
		r.Write(a.stdout)
		return nil
	}
	ms := func(q float64) *float64 { // null without samples
		if v := r.Percentile(q); !math.IsNaN(v) {
			return &v
		}
		return nil
	}
	return a.writeJSON(benchJSON{
		Impl: r.Impl, Workload: r.Workload, Clients: r.Clients, Ops: r.Ops, Seconds: r.Seconds, Rate: r.Rate(),
		P50: ms(0.50), P99: ms(0.99), P999: ms(0.999), Max: ms(1), Errors: r.Errors,
		ServerCPU: r.ServerCPU, ClientCPU: r.ClientCPU, Rx: r.Rx, Tx: r.Tx, Notes: r.Notes,
	})
}

// csvHeader names the columns of bench --csv.
var csvHeader = []string{"impl", "workload", "clients", "ops", "seconds", "ops_per_s",
	"p50_ms", "p99_ms", "p999_ms", "max_ms", "errors", "server_rx_per_op"}

// csvRow is one point of bench --csv; a percentile without samples is
// empty.
func csvRow(r *workload.Result) []string {
	ms := func(q float64) string {
		if v := r.Percentile(q); !math.IsNaN(v) {
			return strconv.FormatFloat(v, 'f', 3, 64)
		}
		return ""
	}
	perOp := ""
	if r.Ops > 0 && r.Rx > 0 {
		perOp = strconv.FormatFloat(float64(r.Rx)/float64(r.Ops), 'f', 2, 64)
	}
	return []string{r.Impl, r.Workload, strconv.Itoa(r.Clients), strconv.FormatInt(int64(r.Ops), 10),
		strconv.FormatFloat(r.Seconds, 'f', 3, 64), strconv.FormatFloat(r.Rate(), 'f', 1, 64),
		ms(0.50), ms(0.99), ms(0.999), ms(1), strconv.FormatInt(int64(r.Errors), 10), perOp}
}

// benchJSON is one point in bench's JSON output.
type benchJSON struct {
	Impl      string   `json:"impl"`
	Workload  string   `json:"workload"`
	Clients   int      `json:"clients"`
	Ops       int64    `json:"ops"`
	Seconds   float64  `json:"seconds"`
	Rate      float64  `json:"ops_per_sec"`
	P50       *float64 `json:"p50_ms"`
	P99       *float64 `json:"p99_ms"`
	P999      *float64 `json:"p999_ms"`
	Max       *float64 `json:"max_ms"`
	Errors    int64    `json:"errors"`
	ServerCPU float64  `json:"srv_cpu_s"`
	ClientCPU float64  `json:"cli_cpu_s"`
	Rx        int64    `json:"srv_pkts_rx"`
	Tx        int64    `json:"srv_pkts_tx"`
	Notes     []string `json:"notes,omitempty"`
}

// warmUp runs the anchors' unreported warm-up: W4 with 1 client, then W1
// with 8, each for d (the anchors' 2 s by default).
func warmUp(ctx context.Context, p workload.Point, d time.Duration) {
	if d <= 0 {
		return
	}
	p.Duration = d
	for _, w := range []struct {
		s workload.Spec
		n int
	}{{workload.Raw(), 1}, {workload.Lock(), 8}} {
		q := p
		q.Clients = w.n
		workload.Run(ctx, w.s, q)
	}
}

// printRatios prints, for every point, each zkit implementation's rate
// divided by each baseline's.
func printRatios(w io.Writer, results []*workload.Result) {
	for _, r := range results {
		if !strings.HasPrefix(r.Impl, "zkit.") {
			continue
		}
		for _, b := range results {
			if strings.HasPrefix(b.Impl, "zkit.") || b.Workload != r.Workload || b.Clients != r.Clients || b.Rate() == 0 {
				continue
			}
			fmt.Fprintf(w, "# ratio %s %d %s/%s = %.2f\n", r.Workload, r.Clients, r.Impl, b.Impl, r.Rate()/b.Rate())
		}
	}
}

func intList(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 || n > math.MaxInt32 {
			return nil, usagef("%s %q: %q is not a positive number", flag, s, f)
		}
		out = append(out, n)
	}
	return out, nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// demoStep is one step of the tour: a recipe under concurrent load or a
// fault, with the invariant it checks as it goes.
type demoStep struct {
	recipe       string // the package, first column of the table
	name         string // what the step does
	invariant    string // what must hold
	embeddedOnly bool   // needs the embedded server's fault hooks
	run          func(ctx context.Context, d *demoEnv) (detail string, err error)
}

// demoSteps is the tour, in order. Each recipe's steps live in
// demo_<recipe>.go.
var demoSteps = []demoStep{
	{"lock", "contention with fenced writes", "mutual exclusion, tokens increase, no lost write", false, lockContention},
	{"lock", "holder's session expires", "next holder has a higher token; stale write refused", false, lockExpiry},
	{"lock", "combining: goroutines sharing a Lock", "mutual exclusion, tokens increase, no lost write", false, lockCombining},
	{"lock", "create reply lost", "exactly one node, adopted", true, lockLostReply},
	{"lock", "transfers under two locks (NewMulti)", "sum of the accounts kept, no deadlock", false, multiLockTransfers},
	{"semaphore", "contention, half as many leases", "never more holders than leases", false, semaphoreContention},
	{"rwlock", "readers and writers", "a writer is alone; readers share", false, rwlockContention},
	{"rwlock", "upgrade attempt", "refused at once, no deadlock", false, rwlockUpgrade},
	{"election", "failover with forced crashes", "one leader at a time (fenced), no lost write", false, electionCrash},
	{"election", "leader selector (Run), requeued", "one lead at a time, every candidate leads", false, leaderSelector},
	{"counter", "contended counter", "exact total, no duplicate results", false, counterContention},
	{"counter", "reply lost after the write", "reported unknown, counted once", true, counterLostReply},
	{"members", "membership churn", "watchers converge on the true group", false, membershipChurn},
	{"discovery", "instances, picks, an expiry", "picks even; expired instance back; views converge", false, discoveryFailover},
	{"rendezvous", "master address, launcher exit", "worker before master gets the address; launcher exit seen", false, rendezvousLaunch},
	{"barrier", "double barrier rounds", "nobody through early, nobody out early", false, barrierRounds},
	{"barrier", "member's session expires inside", "the others leave, told a member was lost", false, barrierExpiry},
	{"config", "ready-flag config updates", "only complete snapshots; watchers end on the last", false, configUpdates},
	{"cache", "config tree under a tree cache", "each writer reads its write at its zxid; cache = tree", false, cacheReadYourWrites},
}

func newDemoCmd(a *app) *cobra.Command {
	var workers, rounds int
	cmd := &cobra.Command{
		Use:   "demo [--workers N] [--rounds N]",
		Short: "Run every recipe with concurrent workers and faults, checking their invariants",
		Long: `The tour of zkit, and the first thing to run: it starts the bundled reference
ZooKeeper server in-process (nothing to install), runs every recipe against it with
concurrent workers (each its own session) and with faults (expired sessions, lost
replies), checks each recipe's invariant as it goes, and ends with a table. It exits 0
only if every invariant held.

With --servers it runs against that ensemble instead, under a fresh root path that it
deletes at the end; steps that need the embedded server's fault hooks are skipped.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if workers < 2 || rounds < 1 {
				return usagef("--workers must be at least 2 and --rounds at least 1")
			}
			return a.demo(cmd.Context(), workers, rounds)
		},
	}
	cmd.Flags().IntVar(&workers, "workers", 8, "concurrent workers per recipe, each its own session")
	cmd.Flags().IntVar(&rounds, "rounds", 50, "operations per worker")
	return cmd
}

// demoEnv is what a step works with.
type demoEnv struct {
	servers []string
	opts    []client.Option // the global flags' (TLS), with --servers
	srv     *zktest.Server  // the embedded server; nil with --servers
	root    string          // every step's paths are under it
	workers int
	rounds  int
	ops     atomic.Int64 // the current step's operations

	// The current step's clock: the phase whose rate it reports (its
	// workers'), without the setup and checks around it. Its line and the
	// table show the rate of this one clock.
	clockStart time.Time
	clocked    time.Duration
}

// startClock starts the step's measured phase.
func (d *demoEnv) startClock() { d.clockStart = time.Now() }

// stopClock ends the step's measured phase and returns its length.
func (d *demoEnv) stopClock() time.Duration {
	d.clocked = time.Since(d.clockStart)
	return d.clocked
}

func (a *app) demo(ctx context.Context, workers, rounds int) error {
	d := &demoEnv{workers: workers, rounds: rounds, root: "/zkit-demo"}
	where := ""
	if a.servers != "" {
		servers, err := a.serverList()
		if err != nil {
			return err
		}
		d.servers = servers
		if d.opts, err = a.clientOptions(); err != nil {
			return err
		}
		// Reachable within --connect-timeout, or the unreachable error
		// now: each step would wait for its own deadline.
		c, err := a.connect(ctx)
		if err != nil {
			return err
		}
		c.Close()
		d.root = fmt.Sprintf("/zkit-demo-%d", time.Now().UnixNano())
		where = "ZooKeeper at " + strings.Join(servers, ",") + ", under " + d.root
	} else {
		srv, err := zktest.StartServer("127.0.0.1:0")
		if err != nil {
			return failf("cannot start the embedded server: %v", err)
		}
		defer srv.Close()
		d.srv, d.servers = srv, srv.Servers()
		where = "the embedded reference server on " + srv.Addr()
	}
	fmt.Fprintf(a.stdout, "zkit demo: %d steps against %s; %d workers × %d rounds\n\n",
		len(demoSteps), where, workers, rounds)

	live := isTerminal(a.stdout)
	var rows []demoRow
	for _, s := range demoSteps {
		row := demoRow{step: s}
		if s.embeddedOnly && d.srv == nil {
			row.result = "skipped: needs the embedded server"
			rows = append(rows, row)
			fmt.Fprintf(a.stdout, "skip %s (needs the embedded server's fault hooks)\n", stepColumns(s))
			continue
		}
		row.run(ctx, d, a.stdout, live)
		rows = append(rows, row)
		if ctx.Err() != nil {
			break // stopped (a signal): the steps left would only fail
		}
	}
	if a.servers != "" {
		cleanupDemo(d)
	}
	printTable(a.stdout, rows)
	if err := ctx.Err(); err != nil {
		return err
	}
	failed := 0
	for _, r := range rows {
		if r.err != nil {
			failed++
		}
	}
	if failed > 0 {
		return failf("%d of %d steps failed", failed, len(rows))
	}
	return nil
}

// demoRow is one step's outcome.
type demoRow struct {
	step    demoStep
	ops     int64
	elapsed time.Duration // the whole step
	clocked time.Duration // its measured phase (demoEnv.startClock), else the whole step
	detail  string
	result  string
	err     error
}

func (r *demoRow) run(ctx context.Context, d *demoEnv, out io.Writer, live bool) {
	s := r.step
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	d.ops.Store(0)
	d.clocked = 0
	stop := func() {}
	if live {
		stop = progress(out, s, &d.ops)
	}
	start := time.Now()
	r.detail, r.err = s.run(ctx, d)
	r.elapsed = time.Since(start)
	stop()
	r.ops = d.ops.Load()
	r.clocked = r.elapsed
	if d.clocked > 0 {
		r.clocked = d.clocked
	}
	var v *violation
	switch {
	case r.err == nil:
		r.result = "held"
		fmt.Fprintf(out, "ok   %s %s (%v)\n", stepColumns(s), r.detail, r.elapsed.Round(time.Millisecond))
	case parent.Err() != nil:
		r.result = "stopped"
		fmt.Fprintf(out, "stop %s %v\n", stepColumns(s), context.Cause(parent))
	case errors.As(r.err, &v):
		r.result = "VIOLATED"
		fmt.Fprintf(out, "FAIL %s invariant violated: %v\n", stepColumns(s), r.err)
	default:
		r.result = "ERROR"
		fmt.Fprintf(out, "FAIL %s %v\n", stepColumns(s), r.err)
	}
}

// stepColumns renders a step's recipe and name for the step lines, each
// padded to the longest of all steps', so that a long one does not push
// its line out of the columns.
func stepColumns(s demoStep) string {
	rw, nw := 0, 0
	for _, t := range demoSteps {
		rw = max(rw, utf8.RuneCountInString(t.recipe))
		nw = max(nw, utf8.RuneCountInString(t.name))
	}
	return fmt.Sprintf("%-*s %-*s", rw, s.recipe, nw, s.name)
}

// progress redraws one line with the step's operation count until stop.
func progress(out io.Writer, s demoStep, ops *atomic.Int64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			fmt.Fprintf(out, "\r...  %s %d ops", stepColumns(s), ops.Load())
			select {
			case <-t.C:
			case <-done:
				fmt.Fprint(out, "\r\033[K")
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}

func printTable(out io.Writer, rows []demoRow) {
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RECIPE\tSTEP\tOPS\tRATE\tINVARIANT\tRESULT")
	for _, r := range rows {
		rate := "-"
		if r.ops > 0 && r.clocked > 0 {
			rate = fmt.Sprintf("%.0f/s", float64(r.ops)/r.clocked.Seconds())
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", r.step.recipe, r.step.name, r.ops, rate, r.step.invariant, r.result)
	}
	tw.Flush()
}

// violation is an invariant that did not hold (as opposed to a step that
// could not run).
type violation struct{ msg string }

func (v *violation) Error() string { return v.msg }

func violationf(format string, args ...any) error {
	return &violation{msg: fmt.Sprintf(format, args...)}
}

// path is name under the demo's root.
func (d *demoEnv) path(name string) string { return d.root + "/" + name }

// count adds n operations to the current step's count.
func (d *demoEnv) count(n int) { d.ops.Add(int64(n)) }

func (d *demoEnv) connect(ctx context.Context, opts ...client.Option) (*client.Client, error) {
	return client.Connect(ctx, d.servers, append(d.opts[:len(d.opts):len(d.opts)], opts...)...)
}

// connectAll opens n clients, each its own session, and the function that
// closes them.
func (d *demoEnv) connectAll(ctx context.Context, n int) ([]*client.Client, func(), error) {
	cs := make([]*client.Client, 0, n)
	closeAll := func() {
		for _, c := range cs {
			c.Close()
		}
	}
	for range n {
		c, err := d.connect(ctx)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		cs = append(cs, c)
	}
	return cs, closeAll, nil
}

// expire ends a session on the server, as a timeout would.
func (d *demoEnv) expire(ctx context.Context, s *client.Session) error {
	if d.srv != nil {
		if !d.srv.ExpireSession(s.ID()) {
			return fmt.Errorf("session 0x%x was not alive", s.ID())
		}
		return nil
	}
	return zktest.ExpireSession(ctx, d.servers[0], s.ID(), s.Password())
}

// cleanupDemo deletes the demo's tree on an external ensemble.
func cleanupDemo(d *demoEnv) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := d.connect(ctx)
	if err != nil {
		return
	}
	defer c.Close()
	deleteTree(ctx, c, d.root)
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

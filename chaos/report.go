package chaos

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// Summary is what one scenario did and what held: the line it prints.
type Summary struct {
	Scenario   string        // "1 kill the leader"
	Recipes    []string      // the recipes that ran under the faults
	Ops        int           // operations recorded (and checked)
	Faults     int           // faults injected
	Violations int           // must be 0
	Recovery   time.Duration // the worst time from a fault to the next progress of every recipe
	Held       string        // what held, in a few words
}

// Line is the summary as one line.
func (s Summary) Line() string {
	rec := "-"
	if s.Recovery > 0 {
		rec = s.Recovery.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("chaos: %-28s ops=%-7d faults=%-4d violations=%d worst-recovery=%-8s recipes=%s; %s",
		s.Scenario, s.Ops, s.Faults, s.Violations, rec, strings.Join(s.Recipes, ","), s.Held)
}

// Row is the summary as a row of docs/reliability.md's table.
func (s Summary) Row() string {
	rec := "–"
	if s.Recovery > 0 {
		rec = s.Recovery.Round(10 * time.Millisecond).String()
	}
	return fmt.Sprintf("| %s | %s | %d | %d | %d | %s | %s |",
		s.Scenario, strings.Join(s.Recipes, ", "), s.Ops, s.Faults, s.Violations, rec, s.Held)
}

// TableHeader heads the rows of Row.
const TableHeader = "| scenario | recipes | operations | faults | violations | worst recovery | what held |\n|---|---|---|---|---|---|---|"

// Report collects the summaries of a run.
type Report struct {
	mu   sync.Mutex
	sums []Summary
}

// Add records s.
func (r *Report) Add(s Summary) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sums = append(r.sums, s)
}

// Write prints every summary line, in scenario order, then the table.
func (r *Report) Write(w io.Writer) {
	r.mu.Lock()
	sums := slices.Clone(r.sums)
	r.mu.Unlock()
	if len(sums) == 0 {
		return
	}
	slices.SortStableFunc(sums, func(a, b Summary) int { return strings.Compare(a.Scenario, b.Scenario) })
	for _, s := range sums {
		fmt.Fprintln(w, s.Line())
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, TableHeader)
	for _, s := range sums {
		fmt.Fprintln(w, s.Row())
	}
}

// Progress records when each workload last made progress, to measure how
// long the system took to recover from a fault. It is safe for concurrent
// use.
type Progress struct {
	start time.Time
	mu    sync.Mutex
	at    map[string][]int64 // workload -> times of successful operations, ascending

	// stalled, when set, explains the stall of the workloads named by a
	// fault outside zkit ("" if none); the suite's waitProgress asks it
	// before failing a scenario.
	stalled func(missing []string) string
}

// NewProgress starts measuring; its clock starts now.
func NewProgress() *Progress { return &Progress{start: time.Now(), at: map[string][]int64{}} }

// Now is the progress clock: nanoseconds since NewProgress, monotonic.
// Fault times given to Since and Recovery are read from it.
func (p *Progress) Now() int64 { return int64(time.Since(p.start)) }

// Track makes workload one of those that Since and Recovery wait for,
// before it has made any progress.
func (p *Progress) Track(workload string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.at[workload]; !ok {
		p.at[workload] = nil
	}
}

// Done records a successful operation of workload, now.
func (p *Progress) Done(workload string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at[workload] = append(p.at[workload], p.Now()) // under mu: ascending
}

// Count is the number of successful operations of every workload.
func (p *Progress) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, ts := range p.at {
		n += len(ts)
	}
	return n
}

// Since returns, for each workload, whether it has made progress after t
// (on the progress clock).
func (p *Progress) Since(t int64) (all bool, missing []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for w, ts := range p.at {
		if len(ts) == 0 || ts[len(ts)-1] <= t {
			missing = append(missing, w)
		}
	}
	slices.Sort(missing)
	return len(missing) == 0, missing
}

// Recovery returns how long after t every workload had made progress
// again: the latest of their first successes after t, minus t. It is
// negative if some workload has not progressed since t.
func (p *Progress) Recovery(t int64) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	worst := int64(0)
	for _, ts := range p.at {
		i, _ := slices.BinarySearch(ts, t+1)
		if i == len(ts) {
			return -1
		}
		worst = max(worst, ts[i]-t)
	}
	return time.Duration(worst)
}

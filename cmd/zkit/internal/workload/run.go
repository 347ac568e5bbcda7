package workload

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Point says where and how hard to run a workload.
// Credential is one scheme's credentials, added to a session as
// client.WithAuth adds them.
type Credential struct {
	Scheme string
	Auth   []byte
}

type Point struct {
	Servers  []string
	Clients  int           // concurrent clients; each its own session up to MaxSessions
	Duration time.Duration // each client loops while now < start+Duration
	Budget   int           // if > 0: stop after this many operations in all, not at Duration
	Rounds   int           // for round-based workloads (W3): operations per client
	PIDs     []int         // server processes whose CPU to report (none: not reported)
	// Root is the node under which the point creates its paths, a fresh
	// one each (root/zkit/..., root/gozk/...); "" means DefaultRoot.
	Root string
	Auth []Credential // added to every session of the point
}

// DefaultRoot is where a Point without a Root creates its paths.
const DefaultRoot = "/bench"

// root is p.Root, or DefaultRoot.
func (p Point) root() string {
	if p.Root == "" {
		return DefaultRoot
	}
	return p.Root
}

// MaxSessions caps the sessions of one point: up to 64 clients each have
// a session of their own, as in the anchors; beyond that they share 64.
const MaxSessions = 64

// Spec is one workload of one implementation.
type Spec struct {
	Workload string // "W1_lock", ...
	Impl     string // "zkit.Lock", ...
	// Rounds makes every client run exactly Point.Rounds operations, and
	// counts one operation per round (W3: a round is every member's enter
	// and leave).
	Rounds bool
	// Clients, when not 0, is the only client count the workload is
	// defined at (W3: 8 members; W1_lock_shared: 32 goroutines).
	Clients int
	// Setup prepares Point.Clients clients.
	Setup func(ctx context.Context, p Point) (*Instance, error)
}

// Instance is a workload set up for one point.
type Instance struct {
	// Op is one operation of client i. It returns its latency sample, or
	// a negative duration when it has none.
	Op func(ctx context.Context, i int) (time.Duration, error)
	// Finish, if set, runs when client i has made its last operation of
	// the point, on the client's goroutine: a workload that keeps
	// something from one operation to the next (a leader's term, handed
	// over by its next operation) lets go of it there, so that the other
	// clients' last operations can end.
	Finish func(ctx context.Context, i int)
	// Check runs after the point and returns its correctness notes
	// ("mutual_exclusion=ok", ...); nil means none.
	Check func(ctx context.Context) []string
	// Close releases the clients.
	Close func()
}

// Run measures s at p.
func Run(ctx context.Context, s Spec, p Point) (*Result, error) {
	inst, err := s.Setup(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("%s %s %d: %w", s.Impl, s.Workload, p.Clients, err)
	}
	defer inst.Close()
	r := &Result{Impl: s.Impl, Workload: s.Workload, Clients: p.Clients}
	before := takeProbe(p)
	var (
		mu     sync.Mutex
		done   atomic.Int64
		errs   atomic.Int64
		left   atomic.Int64
		wg     sync.WaitGroup
		start  = time.Now()
		finish = start.Add(p.Duration)
	)
	left.Store(int64(p.Budget))
	more := func(k int) bool {
		switch {
		case s.Rounds:
			return k < p.Rounds
		case p.Budget > 0:
			return left.Add(-1) >= 0
		}
		return time.Now().Before(finish)
	}
	for i := range p.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lats := make([]time.Duration, 0, 1024)
			for k := 0; more(k) && ctx.Err() == nil; k++ {
				lat, err := inst.Op(ctx, i)
				if err != nil {
					errs.Add(1)
					continue
				}
				done.Add(1)
				if lat >= 0 {
					lats = append(lats, lat)
				}
			}
			if inst.Finish != nil {
				inst.Finish(ctx, i)
			}
			mu.Lock()
			r.Lat = append(r.Lat, lats...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	r.Seconds = time.Since(start).Seconds()
	after := takeProbe(p)
	slices.Sort(r.Lat)
	r.Ops, r.Errors = done.Load(), errs.Load()
	if s.Rounds {
		r.Ops /= int64(p.Clients)
	}
	r.Rx, r.Tx = after.rx-before.rx, after.tx-before.tx
	r.ServerCPU, r.ClientCPU = after.serverCPU-before.serverCPU, after.clientCPU-before.clientCPU
	if inst.Check != nil {
		r.Notes = inst.Check(context.WithoutCancel(ctx))
	}
	return r, ctx.Err()
}

// probe is the servers' packet counters and the CPU used so far.
type probe struct {
	rx, tx               int64
	serverCPU, clientCPU float64
}

func takeProbe(p Point) probe {
	var pr probe
	for _, s := range p.Servers {
		pr.addMntr(s)
	}
	for _, pid := range p.PIDs {
		pr.serverCPU += procCPU(strconv.Itoa(pid))
	}
	pr.clientCPU = procCPU("self")
	return pr
}

func (pr *probe) addMntr(server string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := zktest.FourLetterWord(ctx, server, "mntr")
	if err != nil {
		return
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "zk_packets_received":
			pr.rx += v
		case "zk_packets_sent":
			pr.tx += v
		}
	}
}

// procCPU is the user+system CPU seconds of a process ("self" for this
// one), 0 when unknown.
func procCPU(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndex(s, ")")+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// SessionTimeout is the session timeout of every benchmark session, as in
// the anchors.
const SessionTimeout = 30 * time.Second

// ClientOptions are the options of every zkit session of p: the
// benchmarks' session timeout and p's credentials.
func (p Point) ClientOptions() []client.Option {
	opts := []client.Option{client.WithSessionTimeout(SessionTimeout)}
	for _, a := range p.Auth {
		opts = append(opts, client.WithAuth(a.Scheme, a.Auth))
	}
	return opts
}

// connect opens min(p.Clients, MaxSessions) zkit sessions to p's servers,
// and the function that closes them.
func connect(ctx context.Context, p Point) ([]*client.Client, func(), error) {
	cs := make([]*client.Client, 0, min(p.Clients, MaxSessions))
	closeAll := func() {
		for _, c := range cs {
			c.Close()
		}
	}
	for range cap(cs) {
		c, err := client.Connect(ctx, p.Servers, p.ClientOptions()...)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		cs = append(cs, c)
	}
	return cs, closeAll, nil
}

// connectAt opens the sessions of a point (as connect) and creates a fresh
// path for it under p's root, at zkit/what.
func connectAt(ctx context.Context, p Point, what string) ([]*client.Client, string, func(), error) {
	cs, closeAll, err := connect(ctx, p)
	if err != nil {
		return nil, "", nil, err
	}
	path, err := freshPath(ctx, cs[0], p.root(), what)
	if err != nil {
		closeAll()
		return nil, "", nil, err
	}
	return cs, path, closeAll, nil
}

var pathSeq atomic.Int64

// freshPath returns a path no earlier point used, under root/zkit/what,
// and creates it.
func freshPath(ctx context.Context, c *client.Client, root, what string) (string, error) {
	p := fmt.Sprintf("%s/zkit/%s/%d-%d", root, what, time.Now().UnixNano(), pathSeq.Add(1))
	return p, c.EnsurePath(ctx, p)
}

// exclusion counts holders inside a critical section that must be
// exclusive.
type exclusion struct {
	inside, violations atomic.Int64
}

func (e *exclusion) enter() {
	if e.inside.Add(1) != 1 {
		e.violations.Add(1)
	}
}

func (e *exclusion) leave() { e.inside.Add(-1) }

func (e *exclusion) note() string {
	if v := e.violations.Load(); v > 0 {
		return fmt.Sprintf("mutual_exclusion=VIOLATED (%d)", v)
	}
	return "mutual_exclusion=ok"
}

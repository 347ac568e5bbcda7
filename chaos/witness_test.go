package chaos

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// witness writes beside the recipes with ZooKeeper's plain calls only, and
// keeps what the servers acknowledged, so that a run can tell a recipe's
// fault from ZooKeeper's:
//
//   - plain sequential creates, through a client of the whole ensemble: if
//     one of those acknowledged nodes is missing afterwards on any server,
//     ZooKeeper lost an acknowledged write;
//   - conditional setData (read, then write at the version read), through
//     one client pinned to each server: every acknowledged write takes the
//     node one version further, so two acknowledged writes that both
//     reached one version (with different zxids) show that ZooKeeper
//     acknowledged two compare-and-sets at one version, the class of fault
//     that makes a counter return one value twice;
//   - the reads of those clients: a read that shows the node at an older
//     version than the client saw before shows that server's tree going
//     back (a client sends the last zxid it saw when it connects, and a
//     server that has not reached it refuses the connection, so a client
//     never sees an older state than one it saw), the class of fault that
//     makes a cache see a node's change undone.
//
// Any of these proofs means no recipe built on ZooKeeper can be judged by
// what it read during that run.
//
// ZooKeeper 3.6+ also checks itself: each server keeps a digest of its
// tree and compares it with the one the leader sent with each
// transaction, and logs "Digests are not matching" when its copy of the
// tree differs. The witness reads the servers' logs from where they were
// when it started and reports what it finds beside its own proofs.
type witness struct {
	c     *client.Client
	dir   string
	stop  context.CancelFunc
	wg    sync.WaitGroup
	mu    sync.Mutex
	acked []string     // creates acknowledged
	sets  []witnessSet // conditional writes acknowledged
	back  []string     // reads that went back
	logs  []int64      // each server's log size at the start
}

// witnessSet is one acknowledged conditional write.
type witnessSet struct {
	server  string
	version int32 // the node's version after it
	zxid    int64
}

// startWitness starts the writers under a directory of their own.
func startWitness(t *testing.T, e *env) *witness {
	t.Helper()
	w := &witness{c: e.admin(t), dir: fmt.Sprintf("/chaos-witness-%d", time.Now().UnixNano())}
	for i := range e.z.Servers() {
		var size int64
		if fi, err := os.Stat(e.z.LogFile(i)); err == nil {
			size = fi.Size()
		}
		w.logs = append(w.logs, size)
	}
	ctx := testContext(t, time.Minute)
	if err := w.c.EnsurePath(ctx, w.dir+"/cas"); err != nil {
		t.Fatal(err)
	}
	ctx, w.stop = context.WithCancel(testContext(t, 10*time.Minute))
	for g := range 2 {
		w.wg.Go(func() { w.create(ctx, g) })
	}
	for _, srv := range e.z.Servers() {
		c, err := client.Connect(testContext(t, 30*time.Second), []string{srv}, client.WithSessionTimeout(zktest.Scale(10*time.Second)))
		if err != nil {
			t.Fatalf("witness: connect to %s: %v", srv, err)
		}
		t.Cleanup(c.Close)
		w.wg.Go(func() { w.compareAndSet(ctx, c, srv) })
	}
	return w
}

// create makes sequential nodes until ctx ends. Each name is unique
// before its sequence number too: after ZooKeeper lost a create, the
// parent's child counter goes back with it, and a later create would get
// the lost node's number, and so its name.
func (w *witness) create(ctx context.Context, g int) {
	for i := 0; ctx.Err() == nil; i++ {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		p, err := w.c.Create(cctx, fmt.Sprintf("%s/w%d-%d-", w.dir, g, i), nil, client.PersistentSequential)
		cancel()
		if err == nil {
			w.mu.Lock()
			w.acked = append(w.acked, p)
			w.mu.Unlock()
			time.Sleep(2 * time.Millisecond) // enough to catch a loss, without loading the servers
		} else {
			time.Sleep(10 * time.Millisecond) // the connection is down: do not spin
		}
	}
}

// compareAndSet reads the node through c and writes it at the version
// read, until ctx ends.
func (w *witness) compareAndSet(ctx context.Context, c *client.Client, srv string) {
	p := w.dir + "/cas"
	seen, seenZxid := int32(-1), int64(0) // the newest version this session saw
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, st, err := c.Get(cctx, p)
		if err == nil {
			if st.Version < seen {
				w.mu.Lock()
				w.back = append(w.back, fmt.Sprintf("%s served version %d (zxid %#x) after this client had seen version %d (zxid %#x)",
					srv, st.Version, st.Mzxid, seen, seenZxid))
				w.mu.Unlock()
			}
			seen, seenZxid = max(seen, st.Version), max(seenZxid, st.Mzxid)
			st, err = c.Set(cctx, p, []byte(srv), st.Version)
		}
		cancel()
		switch {
		case err == nil:
			seen, seenZxid = max(seen, st.Version), max(seenZxid, st.Mzxid)
			w.mu.Lock()
			w.sets = append(w.sets, witnessSet{server: srv, version: st.Version, zxid: st.Mzxid})
			w.mu.Unlock()
			time.Sleep(2 * time.Millisecond) // give the other writers a turn
		case !client.IsRetryable(err) && !client.IsOutcomeUnknown(err):
			// Another writer got in first (a bad version): read again.
		default:
			time.Sleep(10 * time.Millisecond) // the connection is down: do not spin
		}
	}
}

// lost stops the writers and returns the proof that ZooKeeper lost
// acknowledged writes ("" if the witness found none), and what it
// checked.
func (w *witness) lost(t *testing.T, e *env) (proof, checked string) {
	t.Helper()
	w.stop()
	w.wg.Wait()
	var proofs []string
	if p := w.lostCreates(t, e); p != "" {
		proofs = append(proofs, p)
	}
	if p := w.doubleSets(); p != "" {
		proofs = append(proofs, p)
	}
	if len(w.back) > 0 {
		proofs = append(proofs, fmt.Sprintf("%d reads went back, first: %s", len(w.back), w.back[0]))
	}
	if p := w.digestMismatches(t, e); p != "" {
		// Not a proof by itself: a mismatch the servers repaired (a
		// follower that took a snapshot from the leader afterwards)
		// need not have shown any client a wrong answer.
		t.Logf("witness: %s", p)
		if len(proofs) > 0 {
			proofs = append(proofs, p)
		}
	}
	return strings.Join(proofs, "; "), fmt.Sprintf("%d plain creates and %d conditional writes acknowledged, no read went back", len(w.acked), len(w.sets))
}

// lostCreates reports the acknowledged creates missing on some server
// (each read after a sync with the leader).
func (w *witness) lostCreates(t *testing.T, e *env) string {
	t.Helper()
	ctx := testContext(t, time.Minute)
	missing, where := 0, ""
	for _, srv := range e.z.Servers() {
		names, _, err := syncedChildren(ctx, srv, w.dir)
		if err != nil {
			t.Logf("witness: cannot read %s: %v", srv, err)
			continue
		}
		have := make(map[string]bool, len(names))
		for _, n := range names {
			have[w.dir+"/"+n] = true
		}
		m := 0
		for _, p := range w.acked {
			if !have[p] {
				m++
			}
		}
		if m > missing {
			missing, where = m, srv
		}
	}
	if missing == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d acknowledged plain creates missing on %s", missing, len(w.acked), where)
}

// doubleSets reports the versions that two acknowledged conditional
// writes (different transactions) both reached.
func (w *witness) doubleSets() string {
	byVersion := map[int32][]witnessSet{}
	for _, s := range w.sets {
		byVersion[s.version] = append(byVersion[s.version], s)
	}
	var out []string
	for v, sets := range byVersion {
		zxids := map[int64]bool{}
		for _, s := range sets {
			zxids[s.zxid] = true
		}
		if len(zxids) < 2 {
			continue
		}
		var who []string
		for _, s := range sets {
			who = append(who, fmt.Sprintf("zxid %#x via %s", s.zxid, s.server))
		}
		out = append(out, fmt.Sprintf("version %d twice (%s)", v, strings.Join(who, ", ")))
	}
	if len(out) == 0 {
		return ""
	}
	slices.Sort(out)
	return fmt.Sprintf("ZooKeeper acknowledged %d conditional writes of one version: %s", len(out), strings.Join(out, "; "))
}

// digestMismatches reports the servers whose log says, since the witness
// started, that their tree's digest did not match the leader's.
func (w *witness) digestMismatches(t *testing.T, e *env) string {
	t.Helper()
	var out []string
	for i := range e.z.Servers() {
		b, err := os.ReadFile(e.z.LogFile(i))
		if err != nil {
			t.Logf("witness: cannot read node %d's log: %v", i, err)
			continue
		}
		if int64(len(b)) >= w.logs[i] {
			b = b[w.logs[i]:]
		}
		n, first := 0, ""
		for line := range strings.Lines(string(b)) {
			if strings.Contains(line, "Digests are not matching") {
				if n == 0 {
					first = strings.TrimSpace(line)
				}
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("node %d logged %d digest mismatches, first: %q", i, n, first))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "ZooKeeper found its replicas' trees different: " + strings.Join(out, "; ")
}

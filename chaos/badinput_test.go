package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/rendezvous"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/zktest"
)

// noWait bounds a call that must neither wait nor retry: a few round trips
// at most, which took up to 2.8 s on a loaded CI machine. Far longer means
// it waited or retried (a retry loop lasts until its context ends).
const noWait = 15 * time.Second

// Scenario 10: bad input, through the API and over the wire. Each case
// must end with a typed error, promptly (no retry loop), on the same
// connection and session, with nothing half-created; and recipe
// directories full of nodes of foreign or fuzzed shapes must not confuse
// the recipes.
func badInput(t *testing.T, e *env) Summary {
	w := e.worker(t, 0, 10*time.Second)
	admin := e.admin(t)
	ctx := testContext(t, 2*time.Minute)
	base := zktest.UniquePath(t)
	if err := admin.EnsurePath(ctx, base); err != nil {
		t.Fatal(err)
	}
	sub := w.c.Subscribe()
	defer sub.Close()
	suspended := countStates(sub, client.StateSuspended)
	sum := Summary{Recipes: []string{"client", "lock", "rwlock", "election", "counter", "membership", "barrier", "rendezvous", "configwatch"}}
	bad := func(name string, err error, want ...error) {
		t.Helper()
		sum.Ops++
		for _, target := range want {
			if errors.Is(err, target) {
				return
			}
		}
		t.Errorf("%s: %v, want an error matching one of %v", name, err, want)
		sum.Violations++
	}
	timed := func(name string, fn func() error, want ...error) {
		t.Helper()
		start := time.Now()
		err := fn()
		if d := time.Since(start); d > zktest.Scale(noWait) {
			t.Errorf("%s took %v: a retry loop?", name, d)
			sum.Violations++
		}
		bad(name, err, want...)
	}
	// refused: an input error, at once, and nothing sent.
	refused := func(name string, fn func() error) {
		t.Helper()
		sent := w.r.Requests()
		timed(name, fn, client.ErrInvalidInput)
		if n := w.r.Requests() - sent; n != 0 {
			t.Errorf("%s: %d requests sent before the input error", name, n)
			sum.Violations++
		}
	}
	big := make([]byte, 1<<20)
	huge := make([]byte, 4<<20)
	dir := base + "/lock"

	// Through the API: refused before anything is sent.
	for _, p := range []string{"relative", "/a//b", "/a/", "/a/./b", "/bad\x00name", "/bad\u0001"} {
		refused("lock at "+strconv.Quote(p), func() error { _, err := lock.New(w.c, p).Lock(ctx); return err })
		refused("rwlock at "+strconv.Quote(p), func() error { _, err := rwlock.New(w.c, p).RLock(ctx); return err })
		refused("campaign at "+strconv.Quote(p), func() error { _, err := election.New(w.c, p, "id").Campaign(ctx); return err })
		refused("leader at "+strconv.Quote(p), func() error { _, err := election.New(w.c, p, "").Leader(ctx); return err })
		refused("counter at "+strconv.Quote(p), func() error { _, err := counter.New(w.c, p).Add(ctx, 1); return err })
		refused("member at "+strconv.Quote(p), func() error { _, err := membership.New(w.c, p).Join(ctx, "id", nil); return err })
		refused("barrier at "+strconv.Quote(p), func() error { return barrier.NewDouble(w.c, p, 2).Enter(ctx) })
		refused("rendezvous at "+strconv.Quote(p), func() error { return rendezvous.New(w.c, p).Publish(ctx, nil) })
		refused("config at "+strconv.Quote(p), func() error { _, err := configwatch.New(w.c, p, configwatch.Raw).Get(ctx); return err })
	}
	for _, n := range []int{0, -1} {
		refused(fmt.Sprintf("barrier of %d members", n), func() error { return barrier.NewDouble(w.c, base+"/barrier", n).Enter(ctx) })
	}
	for _, id := range []string{"", "a/b", ".", ".."} {
		refused("member id "+strconv.Quote(id), func() error { _, err := membership.New(w.c, base+"/members").Join(ctx, id, nil); return err })
	}
	refused("int counter set out of range", func() error {
		return counter.New(w.c, base+"/counter", counter.WithEncoding(counter.Int)).Set(ctx, 1<<40)
	})
	for _, data := range [][]byte{big, huge} {
		refused(fmt.Sprintf("lock data of %d bytes", len(data)), func() error {
			_, err := lock.New(w.c, dir, lock.WithData(data)).Lock(ctx)
			return err
		})
		refused(fmt.Sprintf("set of %d bytes", len(data)), func() error { _, err := w.c.Set(ctx, base, data, -1); return err })
		refused(fmt.Sprintf("election id of %d bytes", len(data)), func() error {
			_, err := election.New(w.c, base+"/election", strings.Repeat("a", len(data))).Campaign(ctx)
			return err
		})
	}
	for _, id := range []string{"", "\xff\xfe", "tab\tid", "line\nid", "nul\x00id", "del\x7fid"} {
		refused("election id "+strconv.Quote(id), func() error { _, err := election.New(w.c, base+"/election", id).Campaign(ctx); return err })
	}
	refused("version -2", func() error { _, err := w.c.Set(ctx, base, nil, -2); return err })
	refused("empty ACL", func() error { _, err := w.c.SetACL(ctx, base, nil, -1); return err })

	// Over the wire: sent, refused by the server with a typed error.
	bogus := client.ACL{Perms: client.PermAll, Scheme: "bogus", ID: "x"}
	timed("lock with an invalid ACL", func() error { _, err := lock.New(w.c, dir, lock.WithACL(bogus)).Lock(ctx); return err },
		client.ErrInvalidACL)
	timed("create with an invalid ACL", func() error {
		_, err := w.c.Create(ctx, base+"/acl", nil, client.Persistent, client.WithACL(bogus))
		return err
	}, client.ErrInvalidACL)
	timed("set at a wrong version", func() error { _, err := w.c.Set(ctx, base, nil, 12345); return err }, client.ErrBadVersion)
	timed("delete at a wrong version", func() error { return w.c.Delete(ctx, base, 12345) }, client.ErrBadVersion, client.ErrNotEmpty)
	timed("multi: create, then a set at a wrong version", func() error {
		_, err := w.c.Multi(ctx, client.CreateOp(base+"/half", nil, client.Persistent), client.SetOp(base, nil, 12345))
		return err
	}, client.ErrBadVersion)
	// Data at the limit goes through a follower to the leader: accepted.
	maxData := make([]byte, client.MaxData(base+"/max"))
	timed("create at the data limit", func() error {
		_, err := w.c.Create(ctx, base+"/max", maxData, client.Persistent)
		return err
	}, nil)

	// Nothing half-created: only what succeeded is there (and the lock's
	// directory, which the attempt with the invalid ACL created before
	// its node was refused, as Curator does).
	names := children(t, admin, base)
	slices.Sort(names)
	if got := strings.Join(names, ","); got != "max" && got != "lock,max" {
		t.Errorf("after the bad input, %s holds %v", base, names)
		sum.Violations++
	}
	if names := children(t, admin, dir); len(names) != 0 {
		t.Errorf("lock nodes left behind: %v", names)
		sum.Violations++
	}

	// Undecodable counter data: a typed error naming the length found, and
	// the node untouched.
	junk := []byte("not a long")
	if _, err := admin.Create(ctx, base+"/counter", junk, client.Persistent); err != nil {
		t.Fatal(err)
	}
	timed("add to a counter holding 10 bytes", func() error { _, err := counter.New(w.c, base+"/counter").Add(ctx, 1); return err },
		counter.ErrBadData)
	if data, st, err := admin.Get(ctx, base+"/counter"); err != nil || string(data) != string(junk) || st.Version != 0 {
		t.Errorf("the undecodable counter was touched: %q version %v (%v)", data, st, err)
		sum.Violations++
	}

	// Fuzzed and foreign node names in a lock directory: a name that ends
	// with "lock-" and a sequence number is a queue member (Curator's
	// rule), anything else is ignored; TryLock must agree with that
	// oracle.
	fuzzed := fuzzLockNames(t, ctx, w, admin, base, pick(50, 500), &sum)

	// Undecodable recipe data: lock nodes carrying arbitrary bytes (the
	// lock never decodes them).
	timed("lock node with binary data", func() error {
		l, err := lock.New(w.c, dir, lock.WithData([]byte{0xff, 0x00, 0xfe})).Lock(ctx)
		if err == nil {
			err = l.Unlock(ctx)
		}
		return err
	}, nil)

	if n := suspended.Load(); n != 0 || !w.sessionKept() {
		t.Errorf("the connection dropped %d times (session kept: %v)", n, w.sessionKept())
		sum.Violations++
	}
	sum.Held = fmt.Sprintf("%d calls (bad input, at the limits, fuzzed): typed errors, none retried, nothing half-created, connection and session kept; %d fuzzed lock directories agreed with the oracle", sum.Ops, fuzzed)
	return sum
}

// member is the oracle for lock queue members: Curator's shape, with a
// sequence number that fits in an int64, or a negative one exactly as
// ZooKeeper writes its wrapped int32 counter ("%010d"), which comes after
// every other (creation order).
var member = regexp.MustCompile(`lock-(-?[0-9]{1,19})$`)

// otherKind is the oracle for another queue recipe's nodes (a read/write
// lock's, an election's): a lock refuses a directory that holds one
// created before its own node.
var otherKind = regexp.MustCompile(`(__READ__|__WRIT__|latch-)([0-9]{1,19})$`)

func fuzzLockNames(t *testing.T, ctx context.Context, w *worker, admin *client.Client, base string, trials int, sum *Summary) int {
	rng := rand.New(rand.NewPCG(10, 10))
	pieces := []string{"lock-", "lock", "-", "_c_", "__READ__", "x", "é", "0", "1", "9", "0000000001", "9999999999999999999",
		"9223372036854775807", "9223372036854775808", "00000000000000000000", " ", ".", "lock-lock-"}
	// Names seen to break a recipe once, then random ones.
	fixed := [][]string{
		{"x-lock-9999999999999999999"}, // wrapped to a negative sequence number
		{"lock-", "lock-12x", "lock--000000001", "_c_x-lock-0000000000"},
		{"x-lock--000000001"}, // a wrapped counter's: after the attempt's
		{"lock--0000000001", "lock--1", "lock--2147483649"},
	}
	for trial := range trials + len(fixed) {
		dir := fmt.Sprintf("%s/fuzz-%d", base, trial)
		if err := admin.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		blocked, other := false, false
		k := 1 + rng.IntN(4)
		if trial < len(fixed) {
			k = len(fixed[trial])
		}
		var names []string
		for i := range k {
			var b strings.Builder
			for range 1 + rng.IntN(5) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			name := fmt.Sprintf("%d%s", i, b.String()) // distinct names
			if strings.HasSuffix(name, " ") {
				name += "z"
			}
			if trial < len(fixed) {
				name = fixed[trial][i]
			}
			names = append(names, name)
			if _, err := admin.Create(ctx, dir+"/"+name, []byte{0xde, 0xad}, client.Persistent); err != nil {
				t.Fatalf("creating %q: %v", name, err)
			}
			// The attempt's node will get sequence number k (the
			// directory's k-th child creation).
			if m := member.FindStringSubmatch(name); m != nil {
				seq, err := strconv.ParseInt(m[1], 10, 64)
				switch {
				case err != nil:
				case strings.HasPrefix(m[1], "-"):
					// A wrapped counter's node was created after
					// every other: it blocks nothing.
				case seq < int64(k):
					blocked = true
				}
			}
			if m := otherKind.FindStringSubmatch(name); m != nil {
				// Only one that came before the attempt's node: a
				// later one is its own participant's to refuse.
				if seq, err := strconv.ParseInt(m[2], 10, 64); err == nil && seq <= int64(k) {
					other = true
				}
			}
		}
		sum.Ops++
		start := time.Now()
		l, err := lock.New(w.c, dir).TryLock(ctx)
		switch {
		case time.Since(start) > zktest.Scale(noWait):
			t.Errorf("TryLock among %q took %v", names, time.Since(start))
			sum.Violations++
		case other:
			if !errors.Is(err, recipes.ErrOtherRecipe) {
				t.Errorf("TryLock among %q: %v, want ErrOtherRecipe (another recipe's node)", names, err)
				sum.Violations++
			}
			if err == nil {
				l.Unlock(ctx)
			}
		case err == nil && blocked:
			t.Errorf("TryLock among %q: held, but a lower member exists", names)
			sum.Violations++
			l.Unlock(ctx)
		case err == nil:
			l.Unlock(ctx)
		case errors.Is(err, recipes.ErrWouldBlock) && !blocked:
			t.Errorf("TryLock among %q: blocked by a node that is not a lower member", names)
			sum.Violations++
		case !errors.Is(err, recipes.ErrWouldBlock):
			t.Errorf("TryLock among %q: %v", names, err)
			sum.Violations++
		}
	}
	return trials + len(fixed)
}

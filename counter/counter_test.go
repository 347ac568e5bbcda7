package counter_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

func TestMain(m *testing.M) { os.Exit(zktest.Main(m)) }

// counterPath returns a fresh counter path whose parent does not exist.
func counterPath(t *testing.T) string { return zktest.UniquePath(t) + "/app/count" }

// flusherStopped waits until the flusher of c and path has stopped. The
// flusher hands a call its result before it stops, so right after a call
// returns, the next call may join the flusher's next batch instead of
// starting one of its own: tests that need the next call to be the only
// one in flight wait first.
func flusherStopped(t *testing.T, c *client.Client, path string) {
	t.Helper()
	recipetest.Eventually(t, "the flusher stopped", func() bool { return !counter.Flushing(c, path) })
}

func data(t *testing.T, c *client.Client, path string) ([]byte, *client.Stat) {
	t.Helper()
	d, st, err := c.Get(recipetest.Context(t), path)
	if err != nil {
		t.Fatalf("get %s: %v", path, err)
	}
	return d, st
}

func TestOperations(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := counterPath(t)
		k := counter.New(c, path)

		// A missing node reads as 0 and is not created by reading.
		if v, err := k.Get(ctx); err != nil || v != 0 {
			t.Fatalf("Get on a missing node = %d, %v; want 0", v, err)
		}
		if ok, _, _ := c.Exists(ctx, path); ok {
			t.Fatal("Get created the node")
		}
		// Add creates it (and its parents) holding the delta.
		if v, err := k.Add(ctx, 5); err != nil || v != 5 {
			t.Fatalf("Add(5) on a missing node = %d, %v; want 5", v, err)
		}
		if d, _ := data(t, c, path); binary.BigEndian.Uint64(d) != 5 || len(d) != 8 {
			t.Fatalf("node data %x, want 8-byte big-endian 5", d)
		}
		if v, err := k.Add(ctx, -7); err != nil || v != -2 {
			t.Fatalf("Add(-7) = %d, %v; want -2", v, err)
		}
		if err := k.Set(ctx, 40); err != nil {
			t.Fatal(err)
		}
		if v, err := k.Get(ctx); err != nil || v != 40 {
			t.Fatalf("Get after Set(40) = %d, %v", v, err)
		}
		if ok, err := k.CompareAndSet(ctx, 41, 0); err != nil || ok {
			t.Fatalf("CompareAndSet(41, 0) on 40 = %v, %v; want false", ok, err)
		}
		if ok, err := k.CompareAndSet(ctx, 40, 42); err != nil || !ok {
			t.Fatalf("CompareAndSet(40, 42) = %v, %v; want true", ok, err)
		}
		// Another client's change is seen: Get syncs, and a write from a
		// stale view fails and is retried.
		other := counter.New(b.Connect(t), path)
		if v, err := other.Add(ctx, 1); err != nil || v != 43 {
			t.Fatalf("other client's Add(1) = %d, %v; want 43", v, err)
		}
		if v, err := k.Get(ctx); err != nil || v != 43 {
			t.Fatalf("Get after another client's Add = %d, %v; want 43", v, err)
		}
		if v, err := k.Add(ctx, 1); err != nil || v != 44 {
			t.Fatalf("Add(1) after another client's Add = %d, %v; want 44", v, err)
		}
		// Set and CompareAndSet create a missing node too.
		p2 := path + "-2"
		if ok, err := counter.New(c, p2).CompareAndSet(ctx, 0, 9); err != nil || !ok {
			t.Fatalf("CompareAndSet(0, 9) on a missing node = %v, %v", ok, err)
		}
		p3 := path + "-3"
		if err := counter.New(c, p3).Set(ctx, -3); err != nil {
			t.Fatal(err)
		}
		if v, err := counter.New(b.Connect(t), p3).Get(ctx); err != nil || v != -3 {
			t.Fatalf("Get of a Set(-3) counter = %d, %v", v, err)
		}
	})
}

func TestEncodings(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		for _, tc := range []struct {
			enc  counter.Encoding
			want []byte
		}{
			{counter.Long, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}},
			{counter.Int, []byte{0xff, 0xff, 0xff, 0xfe}},
			{counter.Text, []byte("-2")},
		} {
			path := counterPath(t) + "-" + tc.enc.String()
			k := counter.New(c, path, counter.WithEncoding(tc.enc))
			if _, err := k.Add(ctx, 3); err != nil {
				t.Fatal(err)
			}
			if v, err := k.Add(ctx, -5); err != nil || v != -2 {
				t.Fatalf("%v: Add = %d, %v", tc.enc, v, err)
			}
			if d, _ := data(t, c, path); string(d) != string(tc.want) {
				t.Fatalf("%v: data %x, want %x", tc.enc, d, tc.want)
			}
			// Empty data is 0, as Curator and kazoo read it.
			empty := path + "-empty"
			if _, err := c.Create(ctx, empty, nil, client.Persistent); err != nil {
				t.Fatal(err)
			}
			if v, err := counter.New(c, empty, counter.WithEncoding(tc.enc)).Add(ctx, 1); err != nil || v != 1 {
				t.Fatalf("%v: Add to an empty node = %d, %v", tc.enc, v, err)
			}
		}
		if e, err := counter.ParseEncoding("int"); err != nil || e != counter.Int {
			t.Fatalf("ParseEncoding(int) = %v, %v", e, err)
		}
		if _, err := counter.ParseEncoding("float"); err == nil {
			t.Fatal("ParseEncoding(float) succeeded")
		}
	})
}

// Sessions each running goroutines: every Add counted once, no two Adds
// return the same value, and goroutines of one client combine their
// increments into fewer writes.
func TestConcurrentAdds(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const sessions, goroutines, each = 4, 8, 25
		ctx := recipetest.Context(t)
		path := counterPath(t)
		var mu sync.Mutex
		seen := map[int64]bool{}
		var wg sync.WaitGroup
		for range sessions {
			c := b.Connect(t)
			for range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					k := counter.New(c, path)
					for range each {
						v, err := k.Add(ctx, 1)
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						if seen[v] {
							t.Errorf("two Adds returned %d", v)
						}
						seen[v] = true
						mu.Unlock()
					}
				}()
			}
		}
		wg.Wait()
		total := sessions * goroutines * each
		d, st := data(t, b.Connect(t), path)
		if got := int64(binary.BigEndian.Uint64(d)); got != int64(total) {
			t.Fatalf("counter = %d, want %d", got, total)
		}
		for v := int64(1); v <= int64(total); v++ {
			if !seen[v] {
				t.Fatalf("no Add returned %d", v)
			}
		}
		// Each write is one version: combining made fewer writes than Adds.
		if st.Version+1 >= int32(total) {
			t.Fatalf("%d writes for %d Adds: goroutines of one client did not combine", st.Version+1, total)
		}
		t.Logf("%d Adds in %d writes", total, st.Version+1)
	})
}

// Combined calls apply in order, each seeing the calls before it.
func TestCombinedCallsInOrder(t *testing.T) {
	srv := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	c := srv.Connect(t)
	path := counterPath(t)
	k := counter.New(c, path)
	if err := k.Set(ctx, 10); err != nil {
		t.Fatal(err)
	}
	flusherStopped(t, c, path)
	// Hold the server so that the calls below queue behind one in flight.
	srv.Reference().Pause()
	first := make(chan error, 1)
	go func() { _, err := k.Add(ctx, 1); first <- err }()
	recipetest.Eventually(t, "the first Add is in flight", func() bool {
		return counter.Flushing(c, path) && counter.Queued(c, path) == 0
	})
	type out struct {
		v   int64
		ok  bool
		err error
	}
	var wg sync.WaitGroup
	res := make([]out, 4)
	calls := []func() out{
		func() out { v, err := k.Add(ctx, 5); return out{v: v, err: err} },
		func() out { ok, err := k.CompareAndSet(ctx, 16, 100); return out{ok: ok, err: err} },
		func() out { v, err := k.Get(ctx); return out{v: v, err: err} },
		func() out { v, err := k.Add(ctx, -1); return out{v: v, err: err} },
	}
	for i, f := range calls {
		wg.Add(1)
		go func() { defer wg.Done(); res[i] = f() }()
		recipetest.Eventually(t, "the call is queued", func() bool { return counter.Queued(c, path) == i+1 })
	}
	srv.Reference().Resume()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	want := []out{{v: 16}, {ok: true}, {v: 100}, {v: 99}}
	for i := range want {
		if res[i] != want[i] {
			t.Fatalf("call %d: %+v, want %+v (all: %+v)", i, res[i], want[i], res)
		}
	}
}

func TestBadInput(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := zktest.UniquePath(t)
		if err := c.EnsurePath(ctx, base); err != nil {
			t.Fatal(err)
		}

		// Data that does not decode: a typed error naming the path and
		// the length, and the node is left as it was.
		for _, tc := range []struct {
			enc  counter.Encoding
			data string
		}{
			{counter.Long, "abcde"},
			{counter.Int, "12345678"},
			{counter.Text, "12 apples"},
		} {
			path := base + "/bad-" + tc.enc.String()
			if _, err := c.Create(ctx, path, []byte(tc.data), client.Persistent); err != nil {
				t.Fatal(err)
			}
			k := counter.New(c, path, counter.WithEncoding(tc.enc))
			_, err := k.Add(ctx, 1)
			var de *counter.DataError
			if !errors.As(err, &de) || !errors.Is(err, counter.ErrBadData) || de.Path != path || de.Len != len(tc.data) {
				t.Fatalf("%v: Add on %q returned %v, want a *DataError for %s with length %d", tc.enc, tc.data, err, path, len(tc.data))
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), fmt.Sprint(len(tc.data))) {
				t.Fatalf("error %q does not name the path and the length", err)
			}
			if _, err := k.Get(ctx); !errors.As(err, &de) {
				t.Fatalf("%v: Get returned %v, want a *DataError", tc.enc, err)
			}
			if err := k.Set(ctx, 1); !errors.As(err, &de) {
				t.Fatalf("%v: Set returned %v, want a *DataError", tc.enc, err)
			}
			if d, st := data(t, c, path); string(d) != tc.data || st.Version != 0 {
				t.Fatalf("%v: undecodable data overwritten: %q (version %d)", tc.enc, d, st.Version)
			}
		}
		// CompareAndSet too.
		path := base + "/bad-again"
		if _, err := c.Create(ctx, path, []byte{1, 2, 3}, client.Persistent); err != nil {
			t.Fatal(err)
		}
		k := counter.New(c, path)
		if _, err := k.CompareAndSet(ctx, 0, 1); !errors.Is(err, counter.ErrBadData) {
			t.Fatalf("CompareAndSet on bad data: %v", err)
		}
		if d, st := data(t, c, path); string(d) != "\x01\x02\x03" || st.Version != 0 {
			t.Fatalf("bad data overwritten: %x (version %d)", d, st.Version)
		}

		// Invalid paths, and the root (whose data a counter would take
		// over): refused before anything is sent.
		for _, p := range []string{"", "relative", "/", base + "/trailing/", base + "//x", base + "/./x"} {
			k := counter.New(c, p)
			_, err := k.Add(ctx, 1)
			var ie *client.InputError
			if !errors.As(err, &ie) || !errors.Is(err, client.ErrInvalidInput) {
				t.Fatalf("Add on %q: %v, want *client.InputError", p, err)
			}
			if _, err := k.Get(ctx); !errors.Is(err, client.ErrInvalidInput) {
				t.Fatalf("Get on %q: %v", p, err)
			}
		}
		if kids := recipetest.Children(t, c, base); len(kids) != 4 {
			t.Fatalf("children of %s after bad input: %v", base, kids)
		}

		// Overflow: refused, nothing written, no wrapping.
		for _, tc := range []struct {
			enc      counter.Encoding
			at       int64
			delta    int64
			overflow bool
		}{
			{counter.Int, math.MaxInt32, 1, true},
			{counter.Int, math.MinInt32, -1, true},
			{counter.Int, math.MaxInt32 - 1, 1, false},
			{counter.Long, math.MaxInt64, 1, true},
			{counter.Long, math.MinInt64 + 1, -2, true},
			{counter.Text, math.MaxInt64 - 2, 3, true},
		} {
			path := fmt.Sprintf("%s/overflow-%v-%d", base, tc.enc, tc.at)
			k := counter.New(c, path, counter.WithEncoding(tc.enc))
			if err := k.Set(ctx, tc.at); err != nil {
				t.Fatal(err)
			}
			_, before := data(t, c, path)
			v, err := k.Add(ctx, tc.delta)
			if !tc.overflow {
				if err != nil || v != tc.at+tc.delta {
					t.Fatalf("%v: %d%+d = %d, %v", tc.enc, tc.at, tc.delta, v, err)
				}
				continue
			}
			var oe *counter.OverflowError
			if !errors.As(err, &oe) || !errors.Is(err, counter.ErrOverflow) || oe.Value != tc.at || oe.Delta != tc.delta {
				t.Fatalf("%v: %d%+d returned %d, %v; want an *OverflowError", tc.enc, tc.at, tc.delta, v, err)
			}
			if _, after := data(t, c, path); after.Version != before.Version {
				t.Fatalf("%v: overflowing Add wrote the node", tc.enc)
			}
		}
		// Values the encoding cannot hold are bad input.
		k32 := counter.New(c, base+"/int32", counter.WithEncoding(counter.Int))
		if err := k32.Set(ctx, math.MaxInt32+1); !errors.Is(err, client.ErrInvalidInput) {
			t.Fatalf("Set(2^31) on a 4-byte counter: %v", err)
		}
		if _, err := k32.CompareAndSet(ctx, 0, math.MinInt32-1); !errors.Is(err, client.ErrInvalidInput) {
			t.Fatalf("CompareAndSet to -2^31-1 on a 4-byte counter: %v", err)
		}
		if ok, _, _ := c.Exists(ctx, base+"/int32"); ok {
			t.Fatal("refused input created the node")
		}
		if _, err := counter.New(c, base+"/x", counter.WithEncoding(counter.Encoding(7))).Add(ctx, 1); !errors.Is(err, client.ErrInvalidInput) {
			t.Fatalf("unknown encoding: %v", err)
		}
		if _, err := counter.New(c, base+"/x", counter.WithACL()).Add(ctx, 1); !errors.Is(err, client.ErrInvalidInput) {
			t.Fatalf("empty ACL: %v", err)
		}
	})
}

// WithACL reaches every node the counter creates: its own and the
// missing parents on the way to it, as a lock's and a barrier's do. With a
// creator-only ACL, clients without the identity can neither read nor
// count, nor create beside it; a client with it counts as usual.
func TestACL(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		s := recipetest.DigestCreatorOnly(t, b)
		path := s.Base + "/app/count"
		if _, err := counter.New(s.Owner, path, counter.WithACL(s.ACL...)).Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
		s.RequireACL(t, s.Base, s.Base+"/app", path)
		s.RequireNoAuth(t, "read the counter", func(c *client.Client) error { _, err := counter.New(c, path).Get(ctx); return err })
		s.RequireNoAuth(t, "count", func(c *client.Client) error { _, err := counter.New(c, path).Add(ctx, 1); return err })
		s.RequireNoAuth(t, "create beside it", func(c *client.Client) error {
			_, err := c.Create(ctx, s.Base+"/app/other", nil, client.Persistent)
			return err
		})
		if v, err := counter.New(s.Peer, path, counter.WithACL(s.ACL...)).Add(ctx, 1); err != nil || v != 2 {
			t.Fatalf("a peer with the identity counts: %d, %v; want 2", v, err)
		}
	})
}

package inspect_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/inspect"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// A scan finds every recipe under its root, with holders and queues, and
// the screen of zkit top shows them.
func TestScanAndTop(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c1, c2, c3 := b.Connect(t), b.Connect(t), b.Connect(t)
		root := zktest.UniquePath(t)
		if err := c1.EnsurePath(ctx, root+"/deep/er"); err != nil {
			t.Fatal(err)
		}
		if _, err := lock.New(c1, root+"/deep/er/lock").Lock(ctx); err != nil {
			t.Fatal(err)
		}
		background(t, func(ctx context.Context) { lock.New(c2, root+"/deep/er/lock").Lock(ctx) })
		recipetest.WaitChildren(t, c1, root+"/deep/er/lock", 2)
		background(t, func(ctx context.Context) { lock.New(c3, root+"/deep/er/lock").Lock(ctx) })
		recipetest.WaitChildren(t, c1, root+"/deep/er/lock", 3)
		if _, err := rwlock.New(c2, root+"/rw").RLock(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := semaphore.New(c3, root+"/sem", 3).Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := election.New(c1, root+"/elect", "alpha").Campaign(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := membership.New(c2, root+"/group").Join(ctx, "w-1", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := counter.New(c1, root+"/deep/count").Add(ctx, 5); err != nil {
			t.Fatal(err)
		}

		s := inspect.NewScanner(c1, []string{root}, 0)
		snap, err := s.Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range snap.Reports {
			got = append(got, strings.TrimPrefix(r.Path, root)+" "+string(r.Kind))
		}
		want := []string{"/deep/er/lock lock", "/elect election", "/group group", "/rw rwlock", "/sem semaphore"}
		if !slices.Equal(got, want) {
			t.Fatalf("scan found %q, want %q", got, want)
		}
		rows := snap.Rows(time.Now())
		if r := rows[0]; r.Holder != inspect.Session(sessionOf(c1)) || r.Waiting != 2 || r.Sessions != 3 || r.Longest <= 0 {
			t.Fatalf("lock row %+v, want held by c1 with 2 waiting among 3 sessions", r)
		}
		if r := rows[1]; r.Holder != "alpha" {
			t.Fatalf("election row %+v, want its leader's id, alpha", r)
		}
		if r := rows[2]; r.Holder != "1 member" || r.Sessions != 1 {
			t.Fatalf("group row %+v, want 1 member", r)
		}

		screen := inspect.Top("zkit top", snap, time.Now(), 200, 50)
		lines := strings.Split(screen, "\n")
		if !strings.HasPrefix(lines[2], "PATH ") || !strings.Contains(screen, root+"/deep/er/lock") {
			t.Fatalf("screen:\n%s", screen)
		}
		for _, l := range lines {
			if strings.HasPrefix(l, root+"/deep/er/lock ") && !strings.Contains(l, inspect.Session(sessionOf(c1))) {
				t.Fatalf("lock line %q does not show c1's session %s", l, inspect.Session(sessionOf(c1)))
			}
		}
		// Cut to its size: 40 columns, 4 lines.
		small := strings.Split(inspect.Top("zkit top", snap, time.Now(), 40, 4), "\n")
		if len(small) != 4 || !strings.HasPrefix(small[3], "... ") {
			t.Fatalf("small screen: %q", small)
		}
		for _, l := range small {
			if len([]rune(l)) > 40 {
				t.Fatalf("line %q is wider than 40", l)
			}
		}
	})
}

// A change under a scanned root fires a watch the scan set: the next scan
// shows it. Scans that change nothing set no second watch.
func TestScanWatches(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c1, c2 := b.Connect(t), b.Connect(t)
		root := zktest.UniquePath(t)
		if err := c1.EnsurePath(ctx, root+"/dir"); err != nil {
			t.Fatal(err)
		}
		// An ephemeral node beside it: root is no discovery base, which
		// Inspect would have listed dir to find out.
		if _, err := c1.Create(ctx, root+"/e", nil, client.Ephemeral); err != nil {
			t.Fatal(err)
		}
		s := inspect.NewScanner(c1, []string{root}, 0)
		for range 3 {
			snap, err := s.Scan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Reports) != 0 {
				t.Fatalf("found %d recipes in an empty tree", len(snap.Reports))
			}
		}
		select {
		case <-s.Changed():
			t.Fatal("a watch fired with nothing changed")
		default:
		}

		held, err := lock.New(c2, root+"/dir/a").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		waitChanged(t, s)
		snap, err := s.Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Reports) != 1 || snap.Reports[0].Held()[0].Session != sessionOf(c2) {
			t.Fatalf("after the lock: %+v", snap.Reports)
		}

		// The holder leaves: the watch on its node fires.
		held.Unlock(ctx)
		waitChanged(t, s)
		snap, err = s.Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Reports) != 0 {
			t.Fatalf("after unlock: %+v", snap.Reports)
		}
	})
}

func waitChanged(t *testing.T, s *inspect.Scanner) {
	t.Helper()
	select {
	case <-s.Changed():
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatal("no watch fired")
	}
}

// A scan stops at its maximum of nodes, and says so.
func TestScanMaxNodes(t *testing.T) {
	t.Parallel()
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	c := b.Connect(t)
	root := zktest.UniquePath(t)
	for _, p := range []string{root + "/a/x", root + "/b/y", root + "/c/z"} {
		if err := c.EnsurePath(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := inspect.NewScanner(c, []string{root}, 3).Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Truncated || !strings.Contains(inspect.Top("t", snap, time.Now(), 0, 0), "stopped after") {
		t.Fatalf("snapshot %+v, want truncated", snap)
	}
	var ie *client.InputError
	if _, err := inspect.NewScanner(c, []string{"bad"}, 0).Scan(ctx); !errors.As(err, &ie) {
		t.Fatalf("bad root: %v, want an InputError", err)
	}
}

// A root that does not exist yet is watched for its creation: a scan
// started before the recipe's path is made (zkit top /app/locks before
// the first lock) learns of it.
func TestScanMissingRoot(t *testing.T) {
	t.Parallel()
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	c1, c2 := b.Connect(t), b.Connect(t)
	root := zktest.UniquePath(t) + "/locks"
	s := inspect.NewScanner(c1, []string{root}, 0)
	snap, err := s.Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Reports) != 0 {
		t.Fatalf("found %+v under a missing root", snap.Reports)
	}
	if _, err := lock.New(c2, root).Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, s)
	snap, err = s.Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Reports) != 1 || snap.Reports[0].Kind != inspect.Lock {
		t.Fatalf("after the lock: %+v, want the lock", snap.Reports)
	}
}

// A directory of more children than the nodes a scan may still read is
// not read: the scan stops there and says so, rather than reading (and
// watching) every child of a huge directory, and goes on beside it.
func TestScanMaxNodesLargeDirectory(t *testing.T) {
	t.Parallel()
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	c := b.Connect(t)
	root := zktest.UniquePath(t)
	if err := c.EnsurePath(ctx, root+"/big"); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := c.Create(ctx, fmt.Sprintf("%s/big/n%02d", root, i), nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := lock.New(c, root+"/lk").Lock(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := inspect.NewScanner(c, []string{root}, 20).Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Truncated || snap.Nodes > 20 || len(snap.Reports) != 1 || snap.Reports[0].Path != root+"/lk" {
		t.Fatalf("scan of 34 nodes, at most 20: read %d, truncated %v, found %+v; want truncated, the lock beside found", snap.Nodes, snap.Truncated, snap.Reports)
	}
}

package membership_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// groupPath returns a fresh group path for the test, with its parent made.
func groupPath(t *testing.T, c *client.Client) string {
	t.Helper()
	p := zktest.UniquePath(t)
	if err := c.EnsurePath(recipetest.Context(t), p); err != nil {
		t.Fatal(err)
	}
	return p + "/group"
}

// show renders a snapshot as "id=data,id=data" (sorted as given).
func show(entries []membership.Entry) string {
	var parts []string
	for _, e := range entries {
		parts = append(parts, e.ID+"="+string(e.Data))
	}
	return strings.Join(parts, ",")
}

// ids renders a snapshot's ids, comma separated.
func ids(entries []membership.Entry) string {
	var parts []string
	for _, e := range entries {
		parts = append(parts, e.ID)
	}
	return strings.Join(parts, ",")
}

// awaitSnapshot receives snapshots from feed until render(snapshot) is
// want, and fails the test at a scaled deadline with the last one seen.
func awaitSnapshot(t *testing.T, feed *recipes.Feed[[]membership.Entry], render func([]membership.Entry) string, want string) {
	t.Helper()
	deadline := time.After(zktest.Scale(30 * time.Second))
	last := "(none)"
	for {
		select {
		case s, ok := <-feed.Values():
			if !ok {
				t.Fatalf("feed ended: %v (last %q, want %q)", feed.Err(), last, want)
			}
			if last = render(s); last == want {
				return
			}
		case <-deadline:
			t.Fatalf("watch: last snapshot %q, want %q", last, want)
		}
	}
}

// eventuallyList waits until List renders as want.
func eventuallyList(t *testing.T, c *client.Client, path, want string) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(30 * time.Second))
	for {
		got, err := membership.New(c, path).List(recipetest.Context(t))
		if err != nil {
			t.Fatal(err)
		}
		if show(got) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("List = %q, want %q", show(got), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sortedIDs renders a set of ids as ids() renders a snapshot.
func sortedIDs(set map[string]bool) string {
	var out []string
	for id := range set {
		out = append(out, id)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

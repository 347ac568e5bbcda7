package inspect_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/inspect"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
)

// A client that may list a lock's directory but not read its nodes (their
// ACL) still sees who holds it; a scan passes over what it may not list,
// and says so.
func TestACL(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		s := recipetest.DigestCreatorOnly(t, b)
		outsider := s.Outsiders["no credentials"]
		dir := s.Base + "/lock"
		if err := outsider.EnsurePath(ctx, dir); err != nil { // an open directory
			t.Fatal(err)
		}
		held, err := lock.New(s.Owner, dir, lock.WithACL(s.ACL...)).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := outsider.Get(ctx, held.Node()); !errors.Is(err, client.ErrNoAuth) {
			t.Fatalf("the outsider reads the lock node: %v", err)
		}
		r, err := inspect.Inspect(ctx, outsider, dir)
		if err != nil {
			t.Fatal(err)
		}
		h := r.Held()
		if r.Kind != inspect.Lock || len(h) != 1 || h[0].Session != sessionOf(s.Owner) || h[0].Token != held.Token() {
			t.Fatalf("kind %q holders %+v, want the owner's lock", r.Kind, h)
		}

		closed := s.Base + "/closed"
		if _, err := s.Owner.Create(ctx, closed, nil, client.Persistent, client.WithACL(s.ACL...)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Owner.Create(ctx, closed+"/x", nil, client.Persistent, client.WithACL(s.ACL...)); err != nil {
			t.Fatal(err)
		}
		snap, err := inspect.NewScanner(outsider, []string{s.Base}, 0).Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Reports) != 1 || snap.Reports[0].Path != dir || !slices.Equal(snap.Unreadable, []string{closed}) {
			t.Fatalf("scan: %d reports, unreadable %q; want the lock, and %s unreadable", len(snap.Reports), snap.Unreadable, closed)
		}
	})
}

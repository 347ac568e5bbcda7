package rwlock_test

import (
	"errors"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/zktest"
)

// With a creator-only ACL and digest auth, only clients with the holders'
// credentials can touch the lock. (lock's tests run the same with x509
// identities; the queue that creates the directory is the same.)
func TestCreatorOnlyACL(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		testCreatorOnly(t, recipetest.DigestCreatorOnly(t, b))
	})
}

// testCreatorOnly: readers hold the lock under a creator-only ACL; a client
// without the identity can neither delete nor write their nodes, nor take
// the lock for reading or writing, nor remove the directory: NoAuth. A
// writer with the identity waits for the readers as usual.
func testCreatorOnly(t *testing.T, s *recipetest.CreatorOnly) {
	ctx := recipetest.Context(t)
	dir := s.Base + "/rw"
	r1, err := rwlock.New(s.Owner, dir, rwlock.WithACL(s.ACL...)).RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := rwlock.New(s.Peer, dir, rwlock.WithACL(s.ACL...)).RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.RequireACL(t, s.Base, dir, r1.Node(), r2.Node())

	for _, r := range []*rwlock.Lease{r1, r2} {
		s.RequireNoAuth(t, "delete a reader's node", func(c *client.Client) error { return c.Delete(ctx, r.Node(), -1) })
		s.RequireNoAuth(t, "write a reader's node", func(c *client.Client) error {
			_, err := c.Set(ctx, r.Node(), []byte("mine"), -1)
			return err
		})
	}
	s.RequireNoAuth(t, "take the write lock", func(c *client.Client) error { _, err := rwlock.New(c, dir).TryLock(ctx); return err })
	s.RequireNoAuth(t, "take a read lock", func(c *client.Client) error { _, err := rwlock.New(c, dir).TryRLock(ctx); return err })
	s.RequireNoAuth(t, "delete the directory", func(c *client.Client) error { return c.Delete(ctx, dir, -1) })
	for _, r := range []*rwlock.Lease{r1, r2} {
		if err := r.Err(); err != nil {
			t.Fatalf("a read lease ended: %v", err)
		}
	}

	writer := rwlock.New(s.Peer, dir, rwlock.WithACL(s.ACL...))
	if _, err := writer.TryLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
		t.Fatalf("a writer with the identity while readers hold: %v, want ErrLocked", err)
	}
	for _, r := range []*rwlock.Lease{r1, r2} {
		if err := r.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	w, err := writer.Lock(ctx)
	if err != nil {
		t.Fatalf("a writer with the identity takes the lock: %v", err)
	}
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

package lock_test

import (
	"errors"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
)

// With a creator-only ACL and digest auth, only clients with the holder's
// credentials can touch the lock.
func TestCreatorOnlyACL(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		testCreatorOnly(t, recipetest.DigestCreatorOnly(t, b))
	})
}

// The same with client certificates over TLS (ZooKeeper's x509 scheme).
func TestCreatorOnlyX509(t *testing.T) {
	ca := zktest.NewCA(t)
	zktest.EachTLSBackend(t, ca, func(t *testing.T, b zktest.Backend) {
		testCreatorOnly(t, recipetest.X509CreatorOnly(t, b, ca))
	})
}

// testCreatorOnly: the lock creates its directory (and the missing parent)
// with the lock's ACL, because ZooKeeper checks the permission to delete a
// node on its parent. A client without the identity can then neither
// delete nor write the holder's node, nor take the lock, nor remove the
// directory: it gets NoAuth. A client with it contends as usual.
func testCreatorOnly(t *testing.T, s *recipetest.CreatorOnly) {
	ctx := recipetest.Context(t)
	dir := s.Base + "/lock"
	lease, err := lock.New(s.Owner, dir, lock.WithACL(s.ACL...)).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.RequireACL(t, s.Base, dir, lease.Node())

	s.RequireNoAuth(t, "delete the holder's node", func(c *client.Client) error { return c.Delete(ctx, lease.Node(), -1) })
	s.RequireNoAuth(t, "write the holder's node", func(c *client.Client) error {
		_, err := c.Set(ctx, lease.Node(), []byte("mine"), -1)
		return err
	})
	s.RequireNoAuth(t, "take the lock", func(c *client.Client) error { _, err := lock.New(c, dir).TryLock(ctx); return err })
	s.RequireNoAuth(t, "list the lock", func(c *client.Client) error { _, _, err := c.Children(ctx, dir); return err })
	s.RequireNoAuth(t, "delete the directory", func(c *client.Client) error { return c.Delete(ctx, dir, -1) })
	if err := lease.Err(); err != nil {
		t.Fatalf("the lease ended: %v", err)
	}

	peer := lock.New(s.Peer, dir, lock.WithACL(s.ACL...))
	if _, err := peer.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("a peer with the identity: %v, want ErrLocked", err)
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	next, err := peer.Lock(ctx)
	if err != nil {
		t.Fatalf("a peer with the identity takes the lock: %v", err)
	}
	if err := next.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

package cache_test

import (
	"errors"
	"testing"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// The cache reads with its client's digest credentials.
func TestDigestAuth(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		testCreatorOnly(t, recipetest.DigestCreatorOnly(t, b))
	})
}

// The cache reads on its client's TLS connection, with its certificate.
func TestX509(t *testing.T) {
	ca := zktest.NewCA(t)
	zktest.EachTLSBackend(t, ca, func(t *testing.T, b zktest.Backend) {
		testCreatorOnly(t, recipetest.X509CreatorOnly(t, b, ca))
	})
}

// testCreatorOnly: a tree only its owner's identity may read is cached for
// a client with the identity, and refused to the others with
// client.ErrNoAuth.
func testCreatorOnly(t *testing.T, s *recipetest.CreatorOnly) {
	ctx := recipetest.Context(t)
	if err := s.Owner.EnsurePath(ctx, s.Base+"/a", client.WithACL(s.ACL...)); err != nil {
		t.Fatal(err)
	}
	s.RequireACL(t, s.Base, s.Base+"/a")
	cc, err := cache.OpenTree(ctx, s.Peer, s.Base)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if n := cc.Snapshot().Len(); n != 2 {
		t.Fatalf("%d nodes, want 2", n)
	}
	for who, c := range s.Outsiders {
		if _, err := cache.OpenTree(ctx, c, s.Base); !errors.Is(err, client.ErrNoAuth) {
			t.Errorf("%s: %v, want NoAuth", who, err)
		}
	}
}

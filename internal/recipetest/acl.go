package recipetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// CreatorOnly is the setup of a recipe's ACL test: a creator-only ACL,
// clients that hold its identity, and clients that do not.
type CreatorOnly struct {
	// ACL is what the recipe is given: client.AuthACL(client.PermAll),
	// which the server turns into Identity.
	ACL []client.ACL
	// Identity is the ACL the server stores: the owner's identity with
	// every permission.
	Identity []client.ACL
	// Owner and Peer are two sessions of the identity.
	Owner, Peer *client.Client
	// Outsiders are sessions without it: "no credentials", and "another
	// identity" (another user, or another certificate).
	Outsiders map[string]*client.Client
	// Base is a fresh path under an open root, not created: a recipe given
	// a path under it creates the missing ancestors with the ACL too.
	Base string
}

// DigestCreatorOnly sets up a creator-only ACL test with digest auth
// (alice) on b.
func DigestCreatorOnly(t *testing.T, b zktest.Backend) *CreatorOnly {
	t.Helper()
	return creatorOnly(t, b, client.DigestACL(client.PermAll, "alice", "alice-secret"),
		client.WithDigestAuth("alice", "alice-secret"), client.WithDigestAuth("mallory", "mallory-secret"))
}

// X509CreatorOnly sets up a creator-only ACL test with client
// certificates issued by ca (CN=alice) on b, a backend of
// zktest.EachTLSBackend(t, ca, ...).
func X509CreatorOnly(t *testing.T, b zktest.Backend, ca *zktest.CA) *CreatorOnly {
	t.Helper()
	return creatorOnly(t, b, client.X509ACL(client.PermAll, "CN=alice"),
		client.WithTLS(ca.ClientTLS(ca.ClientCert(t, "alice"))), client.WithTLS(ca.ClientTLS(ca.ClientCert(t, "mallory"))))
}

func creatorOnly(t *testing.T, b zktest.Backend, identity []client.ACL, owner, other client.Option) *CreatorOnly {
	t.Helper()
	s := &CreatorOnly{
		ACL:       client.AuthACL(client.PermAll),
		Identity:  identity,
		Owner:     b.Connect(t, owner),
		Peer:      b.Connect(t, owner),
		Outsiders: map[string]*client.Client{"no credentials": b.Connect(t), "another identity": b.Connect(t, other)},
		Base:      zktest.UniquePath(t),
	}
	// The root of every test's paths stays open to all.
	if err := s.Outsiders["no credentials"].EnsurePath(Context(t), zktest.UniquePathRoot); err != nil {
		t.Fatal(err)
	}
	return s
}

// RequireACL fails t unless every path has the owner's creator-only ACL.
func (s *CreatorOnly) RequireACL(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		acl, _, err := s.Owner.GetACL(Context(t), p)
		if err != nil {
			t.Fatalf("getACL %s: %v", p, err)
		}
		if !slices.Equal(acl, s.Identity) {
			t.Errorf("%s has ACL %v, want %v", p, acl, s.Identity)
		}
	}
}

// RequireNoAuth fails t unless fn, run by each outsider, fails with
// client.ErrNoAuth.
func (s *CreatorOnly) RequireNoAuth(t *testing.T, what string, fn func(c *client.Client) error) {
	t.Helper()
	for name, c := range s.Outsiders {
		if err := fn(c); !errors.Is(err, client.ErrNoAuth) {
			t.Errorf("%s, by a client with %s: %v, want %v", what, name, err, client.ErrNoAuth)
		}
	}
}

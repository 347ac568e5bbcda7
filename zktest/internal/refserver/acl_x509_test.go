package refserver

import (
	"testing"

	"github.com/zkit-dev/zkit/internal/jute"
)

// The x509 scheme: valid in ACLs only with TLS (ZooKeeper registers its
// provider only then), an authenticated identity that "auth" ACLs expand
// to, matched exactly.
func TestX509ACL(t *testing.T) {
	alice := jute.Id{Scheme: "x509", ID: "CN=alice,O=zkit"}
	entry := []jute.ACL{{Perms: jute.PermAll, ID: alice}}
	request := []aclEntry{{perms: jute.PermAll, scheme: alice.Scheme, id: alice.ID}}
	if _, code := fixupACL(request, nil, false); code != jute.ErrInvalidACL {
		t.Errorf("x509 ACL without TLS: %v, want InvalidACL", code)
	}
	if _, code := fixupACL(request, nil, true); code != jute.ErrOK {
		t.Errorf("x509 ACL with TLS: %v", code)
	}
	bad := []aclEntry{{perms: jute.PermAll, scheme: "x509", id: "alice"}}
	if _, code := fixupACL(bad, nil, true); code != jute.ErrInvalidACL {
		t.Errorf("x509 ACL that is not a name: %v, want InvalidACL", code)
	}

	auth := []jute.Id{{Scheme: "ip", ID: "127.0.0.1"}, alice}
	fixed, code := fixupACL([]aclEntry{{perms: jute.PermRead, scheme: "auth"}}, auth, true)
	if code != jute.ErrOK || len(fixed) != 1 || fixed[0].ID != alice || fixed[0].Perms != jute.PermRead {
		t.Errorf("auth ACL of an x509 client: %v %v, want read for %v", fixed, code, alice)
	}
	if !checkACL(entry, jute.PermWrite, auth) {
		t.Error("the certificate's holder is refused")
	}
	// A null id: the provider fails reading it (X500Principal(null)), and
	// without TLS there is no provider to read it.
	null := []aclEntry{{perms: jute.PermAll, scheme: "x509", nullID: true}}
	if _, code := fixupACL(null, nil, true); code != jute.ErrMarshallingError {
		t.Errorf("x509 ACL with a null id: %v, want MarshallingError", code)
	}
	if _, code := fixupACL(null, nil, false); code != jute.ErrInvalidACL {
		t.Errorf("x509 ACL with a null id without TLS: %v, want InvalidACL", code)
	}
	bob := []jute.Id{{Scheme: "x509", ID: "CN=bob,O=zkit"}}
	if checkACL(entry, jute.PermWrite, bob) || checkACL(entry, jute.PermWrite, nil) {
		t.Error("another certificate, or none, is allowed")
	}
}

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
	if _, code := fixupACL(entry, nil, false); code != jute.ErrInvalidACL {
		t.Errorf("x509 ACL without TLS: %v, want InvalidACL", code)
	}
	if _, code := fixupACL(entry, nil, true); code != jute.ErrOK {
		t.Errorf("x509 ACL with TLS: %v", code)
	}
	bad := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "x509", ID: "alice"}}}
	if _, code := fixupACL(bad, nil, true); code != jute.ErrInvalidACL {
		t.Errorf("x509 ACL that is not a name: %v, want InvalidACL", code)
	}

	auth := []jute.Id{{Scheme: "ip", ID: "127.0.0.1"}, alice}
	fixed, code := fixupACL([]jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "auth"}}}, auth, true)
	if code != jute.ErrOK || len(fixed) != 1 || fixed[0].ID != alice || fixed[0].Perms != jute.PermRead {
		t.Errorf("auth ACL of an x509 client: %v %v, want read for %v", fixed, code, alice)
	}
	if !checkACL(entry, jute.PermWrite, auth) {
		t.Error("the certificate's holder is refused")
	}
	bob := []jute.Id{{Scheme: "x509", ID: "CN=bob,O=zkit"}}
	if checkACL(entry, jute.PermWrite, bob) || checkACL(entry, jute.PermWrite, nil) {
		t.Error("another certificate, or none, is allowed")
	}
}

package client

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// ACL is one access-control entry: Perms granted to the identity ID of
// Scheme ("world"/"anyone", "digest"/"user:hash", "ip"/"10.0.0.0/8", ...).
type ACL struct {
	Perms  int32
	Scheme string
	ID     string
}

// Permission bits for ACL entries, as ZooKeeper numbers them.
const (
	PermRead   = 1 << iota // read the data and list the children
	PermWrite              // write the data
	PermCreate             // create children
	PermDelete             // delete children
	PermAdmin              // set the ACL
	PermAll    = PermRead | PermWrite | PermCreate | PermDelete | PermAdmin
)

// OpenACL gives everyone every permission (ZooKeeper's OPEN_ACL_UNSAFE).
var OpenACL = WorldACL(PermAll)

// WorldACL gives everyone perms.
func WorldACL(perms int32) []ACL { return []ACL{{Perms: perms, Scheme: "world", ID: "anyone"}} }

// DigestACL gives perms to the holder of user:password: its id is
// "user:" + base64(sha1("user:password")), as ZooKeeper's digest provider
// computes it.
func DigestACL(perms int32, user, password string) []ACL {
	sum := sha1.Sum([]byte(user + ":" + password))
	return []ACL{{Perms: perms, Scheme: "digest", ID: user + ":" + base64.StdEncoding.EncodeToString(sum[:])}}
}

// X509ACL gives perms to the client whose TLS certificate has subject, in
// RFC 2253 form as ZooKeeper's x509 provider prints it ("CN=alice,O=example"
// for a certificate issued to O=example, CN=alice).
func X509ACL(perms int32, subject string) []ACL {
	return []ACL{{Perms: perms, Scheme: "x509", ID: subject}}
}

// AuthACL gives perms to every identity the creating session authenticated as.
func AuthACL(perms int32) []ACL { return []ACL{{Perms: perms, Scheme: "auth", ID: ""}} }

// ValidateACL checks acl as the server's providers would, and a little
// more: it must not be empty; every entry must grant some permission and
// only the bits PermAll has; and its id must suit its scheme:
//
//   - world: "anyone";
//   - auth: any id (the server replaces it with the creator's identities);
//   - digest: "user:" + base64(sha1("user:password")), as DigestACL builds
//     it (a plain password in its place is refused);
//   - ip: an IPv4 address, optionally with a /bits mask (ZooKeeper 3.8's
//     ip provider takes IPv4 only);
//   - x509 (a client certificate's subject), sasl, and any scheme listed in
//     extra (those the client authenticates with): a non-empty id.
//
// Other schemes are refused: a server rejects an ACL naming a scheme it
// has no provider for. It returns a reason, or "" when acl is valid.
func ValidateACL(acl []ACL, extra ...string) string {
	if len(acl) == 0 {
		return "empty ACL"
	}
	for i, a := range acl {
		if reason := validateEntry(a, extra); reason != "" {
			return fmt.Sprintf("ACL entry %d (%s:%s): %s", i, a.Scheme, a.ID, reason)
		}
	}
	return ""
}

func validateEntry(a ACL, extra []string) string {
	switch {
	case a.Perms == 0:
		return "grants no permission"
	case a.Perms&^PermAll != 0:
		return fmt.Sprintf("unknown permission bits %#x (PermAll is %#x)", a.Perms&^PermAll, PermAll)
	}
	switch a.Scheme {
	case "world":
		if a.ID != "anyone" {
			return `the world scheme's only id is "anyone"`
		}
	case "auth":
	case "digest":
		user, hash, ok := strings.Cut(a.ID, ":")
		if sum, err := base64.StdEncoding.DecodeString(hash); !ok || user == "" || err != nil || len(sum) != sha1.Size {
			return `a digest id is "user:" + base64(sha1("user:password")); build it with DigestACL`
		}
	case "ip":
		if !validIPv4ACL(a.ID) {
			return "an ip id is an IPv4 address with an optional /bits mask"
		}
	case "x509", "sasl":
		if a.ID == "" {
			return "empty id"
		}
	default:
		if a.Scheme == "" || !slices.Contains(extra, a.Scheme) {
			return "unknown scheme (world, auth, digest, ip, x509, sasl, or a scheme the client authenticates with)"
		}
		if a.ID == "" {
			return "empty id"
		}
	}
	return ""
}

func validIPv4ACL(id string) bool {
	addr, bits, masked := strings.Cut(id, "/")
	ip, err := netip.ParseAddr(addr)
	if err != nil || !ip.Is4() {
		return false
	}
	if masked {
		n, err := strconv.Atoi(bits)
		return err == nil && n >= 0 && n <= 32 && bits == strconv.Itoa(n)
	}
	return true
}

// checkACL refuses an invalid ACL for op on path with an *InputError.
func (c *Client) checkACL(op, path string, acl []ACL) error {
	if reason := ValidateACL(acl, c.authSchemes()...); reason != "" {
		return &InputError{Op: op, Path: path, Reason: reason, Err: ErrInvalidACL}
	}
	return nil
}

// authSchemes lists the schemes the client has credentials for.
func (c *Client) authSchemes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.schemes
}

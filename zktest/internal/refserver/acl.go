package refserver

import (
	"crypto/sha1"
	"encoding/base64"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"

	"github.com/zkit-dev/zkit/internal/jute"
)

// The authentication schemes a default ZooKeeper 3.8 registers: "ip" and
// "digest" (plus "world:anyone" and the "auth" pseudo-scheme in ACLs, and
// "super" when a super digest is configured). With TLS, "x509" too: a
// client that presents a certificate the server verifies is authenticated
// as its subject, in RFC 2253 form, as ZooKeeper's X509AuthenticationProvider
// does.

// digestOf returns ZooKeeper's digest identity for "user:password":
// "user:" + base64(sha1("user:password")).
func digestOf(idPassword string) string {
	user, _, _ := strings.Cut(idPassword, ":")
	sum := sha1.Sum([]byte(idPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// javaSplitCount counts the parts of Java's s.split(sep): trailing empty
// strings are removed.
func javaSplitCount(s, sep string) int {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if s == "" {
		return 1 // Java: "".split(":") is [""]
	}
	return len(parts)
}

// hasProvider reports whether ZooKeeper has an authentication provider for
// scheme; x509 says whether the x509 provider is registered (the server
// has TLS).
func hasProvider(scheme string, x509 bool) bool {
	return scheme == "digest" || scheme == "ip" || (x509 && scheme == "x509")
}

// validID reports whether scheme's provider accepts the id of an ACL entry.
func validID(scheme, id string) bool {
	switch scheme {
	case "digest":
		return javaSplitCount(id, ":") == 2
	case "ip":
		_, _, ok := parseIPACL(id)
		return ok
	case "x509":
		// ZooKeeper parses it as an X.500 name; a name has an attribute.
		return strings.Contains(id, "=")
	}
	return false
}

// parseIPACL parses "a.b.c.d" or "a.b.c.d/bits" as ZooKeeper 3.8's
// IPAuthenticationProvider does: IPv4 only.
func parseIPACL(expr string) ([]byte, int, bool) {
	addr, bitsStr, hasBits := strings.Cut(expr, "/")
	ip := parseIPv4(addr)
	if ip == nil {
		return nil, 0, false
	}
	bits := 32
	if hasBits {
		b, ok := javaParseInt(bitsStr)
		if !ok || b < 0 || b > 32 {
			return nil, 0, false
		}
		bits = b
	}
	return ip, bits, true
}

func parseIPv4(s string) []byte {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return nil
	}
	b := make([]byte, 4)
	for i, p := range parts {
		v, ok := javaParseInt(p)
		if !ok || v < 0 || v > 255 {
			return nil
		}
		b[i] = byte(v)
	}
	return b
}

// javaParseInt parses a decimal int32 as Java's Integer.parseInt does,
// which ZooKeeper uses on the parts of an ip ACL: an optional sign, then
// digits that may be any Unicode decimal digits in the Basic Multilingual
// Plane ("１２７" is 127), since Java reads a string as UTF-16 units.
func javaParseInt(s string) (int, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	v := int64(0)
	for _, r := range s {
		d, ok := decimalDigit(r)
		if !ok {
			return 0, false
		}
		v = v*10 + int64(d)
		if v > 1<<31 {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	if v > 1<<31-1 {
		return 0, false
	}
	return int(v), true
}

// decimalDigit is the value of a BMP Unicode decimal digit (category Nd).
// Unicode encodes each script's digits as a run of ten, zero first.
func decimalDigit(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if r > 0xffff || !unicode.IsDigit(r) {
		return 0, false
	}
	start := r
	for unicode.IsDigit(start - 1) {
		start--
	}
	return int(r-start) % 10, true
}

func maskIP(b []byte, bits int) {
	for i := range b {
		switch {
		case bits >= 8:
			bits -= 8
		case bits <= 0:
			b[i] = 0
		default:
			b[i] &= ^byte(0xff >> bits)
			bits = 0
		}
	}
}

// ipMatches reports whether the client address id matches the ACL expression.
func ipMatches(id, expr string) bool {
	aclIP, bits, ok := parseIPACL(expr)
	if !ok {
		return false
	}
	ip := parseIPv4(id)
	if ip == nil {
		return false
	}
	maskIP(aclIP, bits)
	maskIP(ip, bits)
	return string(ip) == string(aclIP)
}

// fixupACL validates acl and expands "auth" entries to the connection's
// authenticated identities, as PrepRequestProcessor.fixupACL does. x509
// says whether the x509 provider is registered. Where ZooKeeper reads a
// null string of an entry it fails with a NullPointerException, which it
// answers with MarshallingError: a null id is fine for "auth" (never read)
// and for a scheme without a provider (InvalidACL before the id is read).
func fixupACL(acl []aclEntry, auth []jute.Id, x509 bool) ([]jute.ACL, jute.Error) {
	var uniq []aclEntry
	for _, a := range acl {
		a.scheme, a.id = javaString(a.scheme), javaString(a.id)
		dup := false
		for _, u := range uniq {
			eq, ok := a.javaEquals(u)
			if !ok {
				return nil, jute.ErrMarshallingError
			}
			if eq {
				dup = true
				break
			}
		}
		if !dup {
			uniq = append(uniq, a)
		}
	}
	if len(uniq) == 0 {
		return nil, jute.ErrInvalidACL
	}
	out := make([]jute.ACL, 0, len(uniq))
	for _, a := range uniq {
		id := jute.ACL{Perms: a.perms, ID: jute.Id{Scheme: a.scheme, ID: a.id}}
		switch {
		case a.nullScheme:
			return nil, jute.ErrInvalidACL
		case a.scheme == "world" && a.nullID:
			return nil, jute.ErrMarshallingError
		case a.scheme == "world" && a.id == "anyone":
			out = append(out, id)
		case a.scheme == "auth":
			found := false
			for _, id := range auth {
				if id.Scheme == "digest" || id.Scheme == "x509" { // the providers that authenticate
					found = true
					out = append(out, jute.ACL{Perms: a.perms, ID: id})
				}
			}
			if !found {
				return nil, jute.ErrInvalidACL
			}
		case !hasProvider(a.scheme, x509):
			return nil, jute.ErrInvalidACL
		case a.nullID:
			return nil, jute.ErrMarshallingError
		case !validID(a.scheme, a.id):
			return nil, jute.ErrInvalidACL
		default:
			out = append(out, id)
		}
	}
	return out, jute.ErrOK
}

// javaEquals is Java's a.equals(u) for ACL entries, with which ZooKeeper
// removes duplicates; ok is false where it throws a NullPointerException
// (a's own string is null where it is compared).
func (a aclEntry) javaEquals(u aclEntry) (eq, ok bool) {
	switch {
	case a.perms != u.perms:
		return false, true
	case a.nullScheme:
		return false, false
	case u.nullScheme || a.scheme != u.scheme:
		return false, true
	case a.nullID:
		return false, false
	}
	return !u.nullID && a.id == u.id, true
}

// checkACL reports whether the identities grant any of the perm bits on a
// node with the given ACL (ZooKeeperServer.checkACL).
func checkACL(acl []jute.ACL, perm int32, auth []jute.Id) bool {
	if len(acl) == 0 {
		return true
	}
	for _, id := range auth {
		if id.Scheme == "super" {
			return true
		}
	}
	for _, a := range acl {
		if a.Perms&perm == 0 {
			continue
		}
		if a.ID.Scheme == "world" && a.ID.ID == "anyone" {
			return true
		}
		for _, id := range auth {
			if id.Scheme != a.ID.Scheme {
				continue
			}
			switch id.Scheme {
			case "digest", "x509":
				if id.ID == a.ID.ID {
					return true
				}
			case "ip":
				if ipMatches(id.ID, a.ID.ID) {
					return true
				}
			}
		}
	}
	return false
}

// maskDigests hides the hash of digest ids, as getACL does for callers
// without ADMIN permission.
func maskDigests(acl []jute.ACL) []jute.ACL {
	out := make([]jute.ACL, len(acl))
	for i, a := range acl {
		if a.ID.Scheme == "digest" {
			if user, _, ok := strings.Cut(a.ID.ID, ":"); ok {
				a.ID.ID = user + ":x"
			}
		}
		out[i] = a
	}
	return out
}

// userName is what whoAmI reports for an identity.
func userName(id jute.Id) string {
	if id.Scheme == "digest" {
		user, _, _ := strings.Cut(id.ID, ":")
		return user
	}
	return id.ID
}

// authSet is a connection's authentication identities. ZooKeeper keeps them
// in a set backed by a ConcurrentHashMap, so their order (visible in whoAmI
// and in how an "auth" ACL expands) is the map's iteration order; authSet
// reproduces it for up to 12 ids (the map's first table of 16 buckets):
// by bucket, then in the order they were added. Adding an id costs a
// lookup and a copy, so that a client adding thousands holds the server
// lock for microseconds each.
type authSet struct {
	ids      []jute.Id // in iteration order
	have     map[jute.Id]struct{}
	inBucket [16]int // how many ids each bucket holds
}

// add inserts id unless present, after the ids of its bucket and those
// before it.
func (a *authSet) add(id jute.Id) {
	if _, ok := a.have[id]; ok {
		return
	}
	if a.have == nil {
		a.have = map[jute.Id]struct{}{}
	}
	a.have[id] = struct{}{}
	b := chmBucket(id)
	at := 0
	for _, n := range a.inBucket[:b+1] {
		at += n
	}
	a.inBucket[b]++
	a.ids = slices.Insert(a.ids, at, id)
}

// list returns the ids in iteration order; the caller must not modify it.
func (a *authSet) list() []jute.Id { return a.ids }

// chmBucket is the bucket of id in a 16-bucket ConcurrentHashMap.
func chmBucket(id jute.Id) int32 {
	h := int32(17)
	h = 37*h + javaStringHash(id.Scheme)
	h = 37*h + javaStringHash(id.ID)
	spread := (h ^ int32(uint32(h)>>16)) & 0x7fffffff
	return spread & 15
}

// javaStringHash is Java's String.hashCode over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// wireACL returns acl with its ids as ZooKeeper writes them (see javaWire);
// acl itself is not modified.
func wireACL(acl []jute.ACL) []jute.ACL {
	for i, a := range acl {
		if javaWire(a.ID.ID) != a.ID.ID {
			out := append([]jute.ACL(nil), acl...)
			for j := i; j < len(out); j++ {
				out[j].ID.ID = javaWire(out[j].ID.ID)
			}
			return out
		}
	}
	return acl
}

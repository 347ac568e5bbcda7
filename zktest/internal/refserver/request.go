package refserver

import (
	"github.com/zkit-dev/zkit/internal/jute"
)

// ZooKeeper reads a request body into Java objects, and some of what it
// answers depends on what Go's records do not keep: a string or buffer of
// length -1 is null (kazoo sends an empty ACL id that way), and a vector
// count below -1 is an empty vector. The server reads every body with
// decoder, and the records whose answers depend on null strings (create
// and setACL, whose ACL ids may be null) with readCreate and readSetACL.

// decoder reads a request body as ZooKeeper does.
func (s *Server) decoder(body []byte) *jute.Decoder {
	return jute.NewDecoder(body, 2*s.cfg.MaxBuffer).JavaVectors()
}

// decodeLenient decodes a request body, null strings reading as "" (for
// ops whose first check of the path treats null as invalid: BadArguments).
func (s *Server) decodeLenient(body []byte, rec any) bool {
	return jute.Unmarshal(s.decoder(body), rec) == nil
}

// decode decodes a request body. Like ZooKeeper, which fails with a
// NullPointerException on a null path, it treats a null string as
// malformed.
func (s *Server) decode(body []byte, rec any) bool {
	d := s.decoder(body)
	return jute.Unmarshal(d, rec) == nil && d.Nulls() == 0
}

// aclEntry is an ACL entry as a request carries it: either string may be
// null.
type aclEntry struct {
	perms              int32
	scheme, id         string
	nullScheme, nullID bool
}

// readACLEntries reads a vector of ACL entries as ZooKeeper does: a negative
// count gives none. Entries are read one by one, so a count larger than the
// body fails on the body's end, not on an allocation.
func readACLEntries(d *jute.Decoder) []aclEntry {
	n := d.Int32()
	var acl []aclEntry
	for i := int32(0); i < n && d.Err() == nil; i++ {
		var a aclEntry
		a.perms = d.Int32()
		a.scheme, a.nullScheme = d.NullableString()
		a.id, a.nullID = d.NullableString()
		acl = append(acl, a)
	}
	return acl
}

// readCreate reads the body of create, create2 and createContainer, or
// with ttl that of createTTL (CreateRequest, CreateTTLRequest).
func (s *Server) readCreate(body []byte, ttl bool) (createArgs, bool) {
	d := s.decoder(body)
	var a createArgs
	a.path, a.nullPath = d.NullableString()
	a.data = d.Buffer()
	a.acl = readACLEntries(d)
	a.flags = d.Int32()
	a.ttl = -1
	if ttl {
		a.ttl = d.Int64()
	}
	return a, d.Err() == nil
}

// setACLArgs is a setACL request.
type setACLArgs struct {
	path    string
	acl     []aclEntry
	version int32
}

// readSetACL reads the body of setACL (SetACLRequest). A null path reads
// as "": ZooKeeper's first check of it finds it invalid either way.
func (s *Server) readSetACL(body []byte) (setACLArgs, bool) {
	d := s.decoder(body)
	var a setACLArgs
	a.path = d.String()
	a.acl = readACLEntries(d)
	a.version = d.Int32()
	return a, d.Err() == nil
}

// createArgs is a create request, whatever its opcode.
type createArgs struct {
	path     string
	nullPath bool
	data     []byte
	acl      []aclEntry
	flags    int32
	ttl      int64 // -1 unless the request was a CreateTTLRequest
}

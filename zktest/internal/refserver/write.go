package refserver

import (
	"fmt"
	"strings"

	"github.com/zkit-dev/zkit/internal/jute"
)

// createKind is the txn a create turns into: ZooKeeper decides it by opcode
// for single requests and by flags inside a multi.
type createKind uint8

const (
	kindCreate createKind = iota // persistent or ephemeral, by flags
	kindContainer
	kindTTL
)

// doCreate checks and applies a create in ZooKeeper's order of checks
// (PrepRequestProcessor.pRequest2TxnCreate) and returns the created path.
func (s *Server) doCreate(tx *txn, c *conn, kind createKind, a createArgs) (string, *node, jute.Error) {
	if a.flags < 0 || a.flags > 6 {
		return "", nil, jute.ErrBadArguments
	}
	isTTLMode := a.flags == jute.FlagPersistentWithTTL || a.flags == jute.FlagPersistentSequentialWithTT
	if isTTLMode && s.cfg.DisableExtendedTypes {
		return "", nil, jute.ErrUnimplemented
	}
	if isTTLMode {
		if a.ttl <= 0 || a.ttl > maxTTL {
			return "", nil, jute.ErrBadArguments
		}
	} else if a.ttl >= 0 {
		return "", nil, jute.ErrBadArguments
	}
	if a.nullPath {
		return "", nil, jute.ErrMarshallingError // a NullPointerException
	}
	slash := strings.LastIndexByte(a.path, '/')
	if slash < 0 || strings.IndexByte(a.path, 0) >= 0 {
		return "", nil, jute.ErrBadArguments
	}
	acl, code := fixupACL(a.acl, c.auth.list(), s.cfg.TLS != nil)
	if code != jute.ErrOK {
		return "", nil, code
	}
	parent := s.nodes[a.path[:slash]]
	if parent == nil {
		return "", nil, jute.ErrNoNode
	}
	if !checkACL(parent.acl, jute.PermCreate, c.auth.list()) {
		return "", nil, jute.ErrNoAuth
	}
	path := a.path
	sequential := a.flags == jute.FlagPersistentSequential || a.flags == jute.FlagEphemeralSequential ||
		a.flags == jute.FlagPersistentSequentialWithTT
	if sequential {
		path += fmt.Sprintf("%010d", parent.cversion)
	}
	if !validatePath(path) {
		return "", nil, jute.ErrBadArguments
	}
	if _, ok := s.nodes[path]; ok {
		return "", nil, jute.ErrNodeExists
	}
	if s.isEphemeralOwner(parent.owner) {
		return "", nil, jute.ErrNoChildrenForEphemerals
	}
	var owner int64
	switch kind {
	case kindContainer:
		owner = containerOwner
	case kindTTL:
		owner = ttlOwner(a.ttl)
	default:
		if a.flags == jute.FlagEphemeral || a.flags == jute.FlagEphemeralSequential {
			owner = c.session.id
		}
	}
	n := s.createNode(tx, path, a.data, acl, owner)
	return path, n, jute.ErrOK
}

// doDelete checks and applies a delete (PrepRequestProcessor, OpCode.delete).
func (s *Server) doDelete(tx *txn, c *conn, path string, version int32) jute.Error {
	pk, _, ok := splitPath(path)
	if !ok || strings.IndexByte(path, 0) >= 0 || isSpecialPath(path) {
		return jute.ErrBadArguments
	}
	parent := s.nodes[pk]
	if parent == nil {
		return jute.ErrNoNode
	}
	if !checkACL(parent.acl, jute.PermDelete, c.auth.list()) {
		return jute.ErrNoAuth
	}
	n := s.nodes[path]
	if n == nil {
		return jute.ErrNoNode
	}
	if version != -1 && version != n.version {
		return jute.ErrBadVersion
	}
	if len(n.children) > 0 {
		return jute.ErrNotEmpty
	}
	s.deleteNode(tx, path)
	return jute.ErrOK
}

// doSetData checks and applies a setData.
func (s *Server) doSetData(tx *txn, c *conn, path string, data []byte, version int32) (*node, jute.Error) {
	if !validatePath(path) {
		return nil, jute.ErrBadArguments
	}
	n := s.nodes[path]
	if n == nil {
		return nil, jute.ErrNoNode
	}
	if !checkACL(n.acl, jute.PermWrite, c.auth.list()) {
		return nil, jute.ErrNoAuth
	}
	if version != -1 && version != n.version {
		return nil, jute.ErrBadVersion
	}
	return s.setNodeData(tx, path, data), jute.ErrOK
}

// doCheck checks a version (the check op); it changes nothing.
func (s *Server) doCheck(c *conn, path string, version int32) jute.Error {
	if !validatePath(path) {
		return jute.ErrBadArguments
	}
	n := s.nodes[path]
	if n == nil {
		return jute.ErrNoNode
	}
	if !checkACL(n.acl, jute.PermRead, c.auth.list()) {
		return jute.ErrNoAuth
	}
	if version != -1 && version != n.version {
		return jute.ErrBadVersion
	}
	return jute.ErrOK
}

// doSetACL checks and applies a setACL.
func (s *Server) doSetACL(c *conn, path string, acl []aclEntry, version int32) (*node, jute.Error) {
	if !validatePath(path) {
		return nil, jute.ErrBadArguments
	}
	fixed, code := fixupACL(acl, c.auth.list(), s.cfg.TLS != nil)
	if code != jute.ErrOK {
		return nil, code
	}
	n := s.nodes[path]
	if n == nil {
		return nil, jute.ErrNoNode
	}
	if !checkACL(n.acl, jute.PermAdmin, c.auth.list()) {
		return nil, jute.ErrNoAuth
	}
	if version != -1 && version != n.aversion {
		return nil, jute.ErrBadVersion
	}
	n.acl = fixed
	n.aversion++
	return n, jute.ErrOK
}

// doDeleteContainer applies deleteContainer (opcode 20), which the
// container reaper uses: no ACL check, and it refuses ordinary ephemerals.
func (s *Server) doDeleteContainer(tx *txn, path string) jute.Error {
	pk, _, ok := splitPath(path)
	if !ok || strings.IndexByte(path, 0) >= 0 || isSpecialPath(path) {
		return jute.ErrBadArguments
	}
	n := s.nodes[path]
	if n == nil {
		return jute.ErrNoNode
	}
	if len(n.children) > 0 {
		return jute.ErrNotEmpty
	}
	if s.isEphemeralOwner(n.owner) {
		return jute.ErrBadVersion
	}
	if s.nodes[pk] == nil {
		return jute.ErrNoNode
	}
	s.deleteNode(tx, path)
	return jute.ErrOK
}

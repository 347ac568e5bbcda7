package refserver

import "github.com/zkit-dev/zkit/internal/jute"

// txn is one write in progress: every change it makes to the tree can be
// undone (a failed multi rolls back), and the watches it triggers fire only
// when it commits, in the order of the changes, as ZooKeeper fires them
// while applying a committed txn.
type txn struct {
	zxid  int64
	time  int64
	undo  []func()
	fires []fire
}

type fireKind uint8

const (
	fireCreated fireKind = iota
	fireDeleted
	fireDataChanged
)

type fire struct {
	kind fireKind
	path string
}

// takeZxid takes the next zxid for a txn. Caller holds s.mu.
func (s *Server) takeZxid() {
	s.takenZxid++
	s.zxid, s.prevZxid = s.takenZxid, s.zxid
}

// unlogZxid undoes the last takeZxid for replies, for a request that
// ZooKeeper fails after taking its zxid but before logging its txn:
// replies go on carrying the last logged zxid, and the next txn takes the
// one after the lost one. Caller holds s.mu.
func (s *Server) unlogZxid() {
	s.zxid = s.prevZxid
}

// untakeZxid gives back the zxid the current request took, for a request
// that ZooKeeper fails before taking one. Caller holds s.mu.
func (s *Server) untakeZxid() {
	s.takenZxid--
	s.zxid = s.prevZxid
}

// newTxn starts a txn at the current zxid (the caller has taken it).
func (s *Server) newTxn() *txn {
	return &txn{zxid: s.zxid, time: s.clock.nowMillis()}
}

func (s *Server) rollback(tx *txn) {
	for i := len(tx.undo) - 1; i >= 0; i-- {
		tx.undo[i]()
	}
	tx.undo, tx.fires = nil, nil
}

// commit fires the watches the txn triggered, each event of the txn's
// zxid.
func (s *Server) commit(tx *txn) {
	send := func(c *conn, typ int32, path string) { s.sendEventOf(c, typ, path, tx.zxid) }
	for _, f := range tx.fires {
		switch f.kind {
		case fireCreated:
			s.dataWatches.trigger(f.path, jute.EventNodeCreated, nil, send)
			s.childWatches.trigger(watchPath(parentKey(f.path)), jute.EventNodeChildrenChanged, nil, send)
		case fireDeleted:
			hit := s.dataWatches.trigger(f.path, jute.EventNodeDeleted, nil, send)
			s.childWatches.trigger(f.path, jute.EventNodeDeleted, hit, send)
			s.childWatches.trigger(watchPath(parentKey(f.path)), jute.EventNodeChildrenChanged, nil, send)
		case fireDataChanged:
			s.dataWatches.trigger(f.path, jute.EventNodeDataChanged, nil, send)
		}
	}
	tx.undo, tx.fires = nil, nil
}

// parentKey is the tree key of p's parent ("" for children of the root).
func parentKey(p string) string {
	parent, _, _ := splitPath(p)
	return parent
}

// createNode adds a node; the caller has checked that the parent exists and
// the node does not.
func (s *Server) createNode(tx *txn, path string, data []byte, acl []jute.ACL, owner int64) *node {
	pk, name, _ := splitPath(path)
	parent := s.nodes[pk]
	n := &node{
		data: data, acl: acl, owner: owner,
		czxid: tx.zxid, mzxid: tx.zxid, pzxid: tx.zxid,
		ctime: tx.time, mtime: tx.time,
		children: map[string]struct{}{},
	}
	oldCversion, oldPzxid := parent.cversion, parent.pzxid
	parent.cversion++
	parent.pzxid = tx.zxid
	parent.children[name] = struct{}{}
	s.nodes[path] = n
	s.registerOwner(path, owner)
	tx.undo = append(tx.undo, func() {
		s.unregisterOwner(path, owner)
		delete(s.nodes, path)
		delete(parent.children, name)
		parent.cversion, parent.pzxid = oldCversion, oldPzxid
	})
	tx.fires = append(tx.fires, fire{fireCreated, path})
	return n
}

// deleteNode removes a node; the caller has checked that it exists.
func (s *Server) deleteNode(tx *txn, path string) {
	pk, name, _ := splitPath(path)
	parent := s.nodes[pk]
	n := s.nodes[path]
	oldPzxid := parent.pzxid
	delete(parent.children, name)
	if tx.zxid > parent.pzxid {
		parent.pzxid = tx.zxid
	}
	delete(s.nodes, path)
	s.unregisterOwner(path, n.owner)
	tx.undo = append(tx.undo, func() {
		s.nodes[path] = n
		parent.children[name] = struct{}{}
		parent.pzxid = oldPzxid
		s.registerOwner(path, n.owner)
	})
	tx.fires = append(tx.fires, fire{fireDeleted, path})
}

// setNodeData replaces a node's data; the caller has checked the version.
func (s *Server) setNodeData(tx *txn, path string, data []byte) *node {
	n := s.nodes[path]
	old := *n
	n.data = data
	n.mtime = tx.time
	n.mzxid = tx.zxid
	n.version++
	tx.undo = append(tx.undo, func() {
		n.data, n.mtime, n.mzxid, n.version = old.data, old.mtime, old.mzxid, old.version
	})
	tx.fires = append(tx.fires, fire{fireDataChanged, path})
	return n
}

func (s *Server) registerOwner(path string, owner int64) {
	switch {
	case owner == 0:
	case isContainerOwner(owner):
		s.containers[path] = struct{}{}
	case !s.cfg.DisableExtendedTypes && isTTLOwner(owner):
		s.ttls[path] = struct{}{}
	default:
		if ss := s.sessions[owner]; ss != nil {
			ss.ephemerals[path] = struct{}{}
		}
	}
}

func (s *Server) unregisterOwner(path string, owner int64) {
	switch {
	case owner == 0:
	case isContainerOwner(owner):
		delete(s.containers, path)
	case !s.cfg.DisableExtendedTypes && isTTLOwner(owner):
		delete(s.ttls, path)
	default:
		if ss := s.sessions[owner]; ss != nil {
			delete(ss.ephemerals, path)
		}
	}
}

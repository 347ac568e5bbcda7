package refserver

import (
	"sort"
	"strings"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Special ephemeralOwner values (ZooKeeper's EphemeralType).
const (
	containerOwner int64 = -1 << 63 // Long.MIN_VALUE
	extendedMask   int64 = -1 << 56 // 0xff00000000000000
	ttlValueMask   int64 = 0x000000ffffffffff
	maxTTL         int64 = ttlValueMask
)

// node is a znode. cversion counts the creates of children, as ZooKeeper
// stores it; clients see 2*cversion - numChildren (see clientStat).
type node struct {
	data     []byte
	acl      []jute.ACL // shared, never modified in place
	czxid    int64
	mzxid    int64
	pzxid    int64
	ctime    int64
	mtime    int64
	version  int32
	cversion int32
	aversion int32
	owner    int64 // raw ephemeralOwner: session id, containerOwner or TTL
	children map[string]struct{}
}

func isContainerOwner(owner int64) bool { return owner == containerOwner }

// isTTLOwner reports whether owner encodes a TTL node (extended types).
func isTTLOwner(owner int64) bool {
	return owner&extendedMask == extendedMask && (owner>>40)&0xffff == 0
}

func ttlOwner(ttl int64) int64 { return extendedMask | ttl }

func ttlOf(owner int64) int64 { return owner & ttlValueMask }

// isEphemeralOwner reports whether owner is a session (an ordinary
// ephemeral), not zero, a container or a TTL marker.
func (s *Server) isEphemeralOwner(owner int64) bool {
	if owner == 0 || isContainerOwner(owner) {
		return false
	}
	if !s.cfg.DisableExtendedTypes && owner&extendedMask == extendedMask {
		return false
	}
	return true
}

// clientStat is the node's Stat as ZooKeeper sends it to clients.
func (s *Server) clientStat(n *node) jute.Stat {
	owner := n.owner
	if !s.isEphemeralOwner(owner) {
		owner = 0
	}
	nc := int32(len(n.children))
	return jute.Stat{
		Czxid:          n.czxid,
		Mzxid:          n.mzxid,
		Ctime:          n.ctime,
		Mtime:          n.mtime,
		Version:        n.version,
		Cversion:       n.cversion*2 - nc,
		Aversion:       n.aversion,
		EphemeralOwner: owner,
		DataLength:     int32(len(n.data)),
		NumChildren:    nc,
		Pzxid:          n.pzxid,
	}
}

var (
	openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	readACL = []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
)

// newTree returns the tree of a freshly started ZooKeeper: "/" (also
// reachable as "", as in ZooKeeper), /zookeeper, /zookeeper/quota and
// /zookeeper/config (read-only, aversion -1).
func newTree() map[string]*node {
	root := &node{acl: openACL, data: []byte{}, children: map[string]struct{}{"zookeeper": {}}}
	zk := &node{acl: openACL, data: []byte{}, children: map[string]struct{}{"quota": {}, "config": {}}}
	quota := &node{acl: openACL, data: []byte{}, children: map[string]struct{}{}}
	config := &node{acl: readACL, data: []byte{}, aversion: -1, children: map[string]struct{}{}}
	return map[string]*node{
		"":                  root,
		"/":                 root,
		"/zookeeper":        zk,
		"/zookeeper/quota":  quota,
		"/zookeeper/config": config,
	}
}

// isSpecialPath reports the nodes that can never be deleted.
func isSpecialPath(p string) bool {
	return p == "/" || p == "/zookeeper" || p == "/zookeeper/quota" || p == "/zookeeper/config"
}

// splitPath returns the parent ("" for children of the root, as in
// ZooKeeper) and the last component. ok is false when p has no '/'.
func splitPath(p string) (parent, child string, ok bool) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", "", false
	}
	return p[:i], p[i+1:], true
}

// watchPath is the path a child watch on parent is registered under:
// ZooKeeper's "" root alias fires watches set on "/".
func watchPath(parent string) string {
	if parent == "" {
		return "/"
	}
	return parent
}

func sortedChildren(n *node) []string {
	out := make([]string, 0, len(n.children))
	for c := range n.children {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// validatePath applies ZooKeeper's PathUtils.validatePath.
func validatePath(p string) bool {
	if len(p) == 0 || p[0] != '/' {
		return false
	}
	if len(p) == 1 {
		return true
	}
	if p[len(p)-1] == '/' {
		return false
	}
	// Iterate as Java does over UTF-16 units; runes outside the BMP are
	// surrogate pairs there, which the range check below rejects.
	runes := []rune(p)
	for i := 1; i < len(runes); i++ {
		c, last := runes[i], runes[i-1]
		switch {
		case c == 0:
			return false
		case c == '/' && last == '/':
			return false
		case c == '.' && last == '.':
			if i >= 2 && runes[i-2] == '/' && (i+1 == len(runes) || runes[i+1] == '/') {
				return false
			}
		case c == '.':
			if last == '/' && (i+1 == len(runes) || runes[i+1] == '/') {
				return false
			}
		case c > 0 && c <= 0x1f, c >= 0x7f && c <= 0x9f, c >= 0xd800 && c <= 0xf8ff, c >= 0xfff0:
			return false
		}
	}
	return true
}

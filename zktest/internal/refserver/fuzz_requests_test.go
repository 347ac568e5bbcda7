package refserver

import (
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/internal/jute"
)

// FuzzRequests feeds one request (opcode and body, in a well-formed frame)
// straight to the server's request handling on an established session, on
// a fresh server holding a few nodes, without the network in between. The
// server must not panic, must answer only with well-formed frames for the
// request's xid (or watch events), and must leave its tree consistent:
// every node's parent lists it, every listed child exists, every ephemeral
// belongs to a live session that knows it, and no zxid goes back. The seed
// corpus (below and testdata/fuzz/FuzzRequests) runs as a normal test.
//
//	go test ./zktest/internal/refserver -run '^$' -fuzz FuzzRequests -fuzztime 60s
func FuzzRequests(f *testing.F) {
	acl := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	for op, rec := range map[int32]any{
		jute.OpCreate:          &jute.CreateRequest{Path: "/a/n", Data: []byte("x"), ACL: acl, Flags: jute.FlagEphemeralSequential},
		jute.OpCreate2:         &jute.CreateRequest{Path: "/c", ACL: []jute.ACL{{Perms: 31, ID: jute.Id{Scheme: "auth"}}}},
		jute.OpCreateContainer: &jute.CreateRequest{Path: "/k", ACL: acl, Flags: jute.FlagContainer},
		jute.OpCreateTTL:       &jute.CreateTTLRequest{Path: "/t", ACL: acl, Flags: jute.FlagPersistentWithTTL, TTL: 100},
		jute.OpDelete:          &jute.DeleteRequest{Path: "/a/b", Version: -1},
		jute.OpSetData:         &jute.SetDataRequest{Path: "/a", Data: []byte("y"), Version: 0},
		jute.OpGetData:         &jute.GetDataRequest{Path: "/a", Watch: true},
		jute.OpExists:          &jute.ExistsRequest{Path: "/missing", Watch: true},
		jute.OpGetChildren2:    &jute.GetChildren2Request{Path: "/a", Watch: true},
		jute.OpGetACL:          &jute.GetACLRequest{Path: "/secret"},
		jute.OpSetACL:          &jute.SetACLRequest{Path: "/a", ACL: acl, Version: -1},
		jute.OpSync:            &jute.SyncRequest{Path: "/"},
		jute.OpCheck:           &jute.CheckVersionRequest{Path: "/a", Version: 0},
		jute.OpAddWatch:        &jute.AddWatchRequest{Path: "/", Mode: jute.AddWatchPersistentRecursive},
		jute.OpSetWatches2:     &jute.SetWatches2{DataWatches: []string{"/a"}, PersistentRecursiveWatches: []string{"/"}},
		jute.OpRemoveWatches:   &jute.CheckWatchesRequest{Path: "/a", Type: jute.WatcherTypeAny},
		jute.OpGetEphemerals:   &jute.GetEphemeralsRequest{PrefixPath: "/"},
		jute.OpReconfig:        &jute.ReconfigRequest{CurConfigID: -1},
		jute.OpAuth:            &jute.AuthPacket{Scheme: "digest", Auth: []byte("u:p")},
		jute.OpMulti: &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCreate, Body: &jute.CreateRequest{Path: "/m", ACL: acl}},
			{Type: jute.OpSetData, Body: &jute.SetDataRequest{Path: "/m", Version: -1}},
			{Type: jute.OpDelete, Body: &jute.DeleteRequest{Path: "/a/b", Version: -1}},
		}},
		jute.OpMultiRead: &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpGetData, Body: &jute.GetDataRequest{Path: "/a"}},
			{Type: jute.OpGetChildren, Body: &jute.GetChildrenRequest{Path: "/missing"}},
		}},
	} {
		f.Add(op, jute.Encode(rec))
	}
	f.Add(jute.OpPing, []byte{})
	f.Add(jute.OpWhoAmI, []byte{})
	f.Add(jute.OpCloseSession, []byte{})
	f.Add(jute.OpCreateSession, []byte{0, 0, 0x75, 0x30})
	f.Add(int32(99), []byte{1})

	f.Fuzz(func(t *testing.T, op int32, body []byte) {
		s := startTest(t, Config{})
		owner := fuzzSession(t, s)
		for _, p := range []string{"/a", "/a/b", "/secret"} {
			acl := openACL
			if p == "/secret" {
				acl = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: digestOf("u:p")}}}
			}
			fuzzRequest(t, s, owner, jute.OpCreate, jute.Encode(&jute.CreateRequest{Path: p, Data: []byte(p), ACL: acl, Flags: 0}))
		}
		fuzzRequest(t, s, owner, jute.OpCreate, jute.Encode(&jute.CreateRequest{Path: "/a/e", ACL: openACL, Flags: jute.FlagEphemeral}))
		c := fuzzSession(t, s)
		before := s.Zxid()
		fuzzRequest(t, s, c, op, body)
		if after := s.Zxid(); after < before {
			t.Errorf("zxid went back from %d to %d", before, after)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.checkTree(); err != nil {
			t.Error(err)
		}
	})
}

// fuzzSession opens a session on a connection that is not served: its
// requests are fed by fuzzRequest, its output stays queued.
func fuzzSession(t *testing.T, s *Server) *conn {
	t.Helper()
	server, client := net.Pipe()
	t.Cleanup(func() { server.Close(); client.Close() })
	s.mu.Lock()
	s.nextConnID++
	c := newConn(s, server, s.nextConnID, "127.0.0.1")
	s.conns[c] = struct{}{}
	s.connsFrom[c.remoteIP]++
	s.mu.Unlock()
	if !s.connect(c, jute.Encode(&jute.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16), HasReadOnly: true})) {
		t.Fatal("no session")
	}
	c.takeOutput()
	return c
}

// fuzzRequest has the server handle one request on c, and checks what c
// was sent.
func fuzzRequest(t *testing.T, s *Server, c *conn, op int32, body []byte) {
	t.Helper()
	const xid = 7
	frame := binary.BigEndian.AppendUint32(nil, xid)
	frame = binary.BigEndian.AppendUint32(frame, uint32(op))
	s.request(c, append(frame, body...))
	for _, b := range c.takeOutput() {
		if len(b) < 4 || int(binary.BigEndian.Uint32(b)) != len(b)-4 {
			t.Fatalf("%s: a frame whose length prefix is not its length: %x", jute.OpName(op), b)
		}
		if op == jute.OpCreateSession {
			continue // answered with a connect response
		}
		var h jute.ReplyHeader
		if err := jute.Decode(b[4:], &h); err != nil {
			t.Fatalf("%s: a reply without a header: %x", jute.OpName(op), b)
		}
		if want := int32(xid); h.Xid != want && h.Xid != jute.XidNotification && !(op == jute.OpPing && h.Xid == jute.XidPing) {
			t.Errorf("%s: a reply with xid %d", jute.OpName(op), h.Xid)
		}
	}
}

// takeOutput empties c's queue and returns the frames it held.
func (c *conn) takeOutput() [][]byte {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	var out [][]byte
	for _, p := range c.queue {
		out = append(out, p.b)
	}
	c.queue, c.queued, c.frames = nil, 0, 0
	return out
}

// checkTree reports the first inconsistency of the tree. Caller holds s.mu.
func (s *Server) checkTree() error {
	if s.zxid > s.takenZxid {
		return fmt.Errorf("zxid %d ahead of the last taken %d", s.zxid, s.takenZxid)
	}
	for p, n := range s.nodes {
		if p != "" && p != "/" {
			parent := s.nodes[parentKey(p)]
			name := p[strings.LastIndexByte(p, '/')+1:]
			if parent == nil {
				return fmt.Errorf("%s has no parent", p)
			}
			if _, ok := parent.children[name]; !ok {
				return fmt.Errorf("%s is not listed by its parent", p)
			}
		}
		for name := range n.children {
			child := "/" + name
			if p != "" && p != "/" {
				child = p + child
			}
			if s.nodes[child] == nil {
				return fmt.Errorf("%s lists %s, which does not exist", p, child)
			}
		}
		if s.isEphemeralOwner(n.owner) {
			ss := s.sessions[n.owner]
			if ss == nil {
				return fmt.Errorf("ephemeral %s of a session that is gone", p)
			}
			if _, ok := ss.ephemerals[p]; !ok {
				return fmt.Errorf("ephemeral %s unknown to its session", p)
			}
		}
	}
	return nil
}

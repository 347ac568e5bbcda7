package refserver

import (
	"strings"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// reply is what handle decided to send back for one request.
type reply struct {
	xid   int32
	zxid  int64
	err   jute.Error
	body  any    // nil: header only
	none  bool   // send nothing at all
	close bool   // close the connection after sending
	raw   []byte // send this frame instead of a reply
}

// validOp lists the opcodes ZooKeeper 3.8 accepts (Request.isValid).
func validOp(op int32) bool {
	switch op {
	case jute.OpCheck, jute.OpCloseSession, jute.OpCreate, jute.OpCreate2, jute.OpCreateTTL,
		jute.OpCreateContainer, jute.OpDelete, jute.OpDeleteContainer, jute.OpExists,
		jute.OpGetACL, jute.OpGetChildren, jute.OpGetAllChildrenNumber, jute.OpGetChildren2,
		jute.OpGetData, jute.OpGetEphemerals, jute.OpMulti, jute.OpMultiRead, jute.OpPing,
		jute.OpReconfig, jute.OpSetACL, jute.OpSetData, jute.OpSetWatches, jute.OpSetWatches2,
		jute.OpSync, jute.OpCheckWatches, jute.OpRemoveWatches, jute.OpAddWatch, jute.OpWhoAmI,
		jute.OpCreateSession:
		return true
	}
	return false
}

// isWrite reports the opcodes that go through ZooKeeper's txn path and so
// take a zxid even when they fail.
func isWrite(op int32) bool {
	switch op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateTTL, jute.OpCreateContainer, jute.OpDelete,
		jute.OpDeleteContainer, jute.OpSetData, jute.OpSetACL, jute.OpCheck, jute.OpMulti,
		jute.OpReconfig, jute.OpCloseSession, jute.OpCreateSession:
		return true
	}
	return false
}

// handle processes one request on an established session. Caller holds s.mu.
func (s *Server) handle(c *conn, hdr jute.RequestHeader, body []byte) reply {
	r := reply{xid: hdr.Xid}
	op := hdr.Type
	if !validOp(op) {
		// UnimplementedRequestProcessor: error header with zxid -1, then close.
		r.zxid, r.err, r.close = -1, jute.ErrUnimplemented, true
		return r
	}
	if isWrite(op) && op != jute.OpCloseSession {
		s.zxid++
	}
	r.err, r.body = s.dispatch(c, op, body, &r)
	if r.zxid == 0 {
		r.zxid = s.zxid
	}
	return r
}

// decodeLenient decodes a request body, null strings reading as "" (for
// ops whose first check of the path treats null as invalid: BadArguments).
func (s *Server) decodeLenient(body []byte, rec any) bool {
	return jute.Unmarshal(jute.NewDecoder(body, 2*s.cfg.MaxBuffer), rec) == nil
}

// decode decodes a request body. Like ZooKeeper, which fails with a
// NullPointerException on a null path, it treats a null string as
// malformed.
func (s *Server) decode(body []byte, rec any) bool {
	d := jute.NewDecoder(body, 2*s.cfg.MaxBuffer)
	return jute.Unmarshal(d, rec) == nil && d.Nulls() == 0
}

func (s *Server) dispatch(c *conn, op int32, body []byte, r *reply) (jute.Error, any) {
	switch op {
	case jute.OpPing:
		return jute.ErrOK, nil

	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer:
		var req jute.CreateRequest
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		kind := kindCreate
		if op == jute.OpCreateContainer {
			kind = kindContainer
		}
		return s.singleCreate(c, op, kind, createArgs{req.Path, req.Data, req.ACL, req.Flags, -1})

	case jute.OpCreateTTL:
		var req jute.CreateTTLRequest
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		return s.singleCreate(c, op, kindTTL, createArgs{req.Path, req.Data, req.ACL, req.Flags, req.TTL})

	case jute.OpDelete:
		var req jute.DeleteRequest
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		tx := s.newTxn()
		if code := s.doDelete(tx, c, req.Path, req.Version); code != jute.ErrOK {
			return code, nil
		}
		s.commit(tx)
		return jute.ErrOK, nil

	case jute.OpDeleteContainer:
		// ZooKeeper reads the path from the whole packet buffer, request
		// header included, whose opcode has zero bytes: from a client
		// the path is never valid. (The reaper deletes containers
		// directly.)
		return jute.ErrBadArguments, nil

	case jute.OpCreateSession:
		// A createSession sent on an established connection touches the
		// session with the timeout in the body and answers with a
		// connect response (ZooKeeper's prep and final processors).
		if len(body) < 4 {
			return jute.ErrMarshallingError, nil
		}
		to := int32(uint32(body[0])<<24 | uint32(body[1])<<16 | uint32(body[2])<<8 | uint32(body[3]))
		ss := c.session
		saved := ss.timeout
		ss.timeout = time.Duration(to) * time.Millisecond
		s.touch(ss, s.clock.now())
		ss.timeout = saved
		r.raw = jute.Frame(&jute.ConnectResponse{TimeOut: int32(ss.timeout / time.Millisecond),
			SessionID: ss.id, Passwd: ss.passwd, HasReadOnly: !c.oldClient})
		return jute.ErrOK, nil

	case jute.OpSetData:
		var req jute.SetDataRequest
		if !s.decodeLenient(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		tx := s.newTxn()
		n, code := s.doSetData(tx, c, req.Path, req.Data, req.Version)
		if code != jute.ErrOK {
			return code, nil
		}
		s.commit(tx)
		return jute.ErrOK, &jute.SetDataResponse{Stat: s.clientStat(n)}

	case jute.OpCheck:
		var req jute.CheckVersionRequest
		if !s.decodeLenient(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		if code := s.doCheck(c, req.Path, req.Version); code != jute.ErrOK {
			return code, nil
		}
		// ZooKeeper 3.8 answers a successful check outside a multi with a
		// SetDataResponse whose stat is null, which it fails to
		// serialize: the client never gets a reply. Do the same.
		r.none = true
		return jute.ErrOK, nil

	case jute.OpSetACL:
		var req jute.SetACLRequest
		if !s.decodeLenient(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		n, code := s.doSetACL(c, req.Path, req.ACL, req.Version)
		if code != jute.ErrOK {
			return code, nil
		}
		return jute.ErrOK, &jute.SetACLResponse{Stat: s.clientStat(n)}

	case jute.OpMulti:
		return s.multi(c, body)

	case jute.OpMultiRead:
		return s.multiRead(c, body)

	case jute.OpReconfig:
		return jute.ErrReconfigDisabled, nil

	case jute.OpCloseSession:
		s.closeSession(c.session)
		c.session = nil
		r.close = true
		return jute.ErrOK, nil

	case jute.OpSync:
		var req jute.SyncRequest
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		return jute.ErrOK, &jute.SyncResponse{Path: req.Path}

	case jute.OpExists:
		var req jute.ExistsRequest
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		if strings.IndexByte(req.Path, 0) >= 0 {
			return jute.ErrBadArguments, nil
		}
		if req.Watch {
			s.dataWatches.add(req.Path, c, watchStandard)
		}
		n := s.nodes[req.Path]
		if n == nil {
			return jute.ErrNoNode, nil
		}
		return jute.ErrOK, &jute.ExistsResponse{Stat: s.clientStat(n)}

	case jute.OpGetData:
		var req jute.GetDataRequest
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		n, code := s.readable(c, req.Path, jute.PermRead)
		if code != jute.ErrOK {
			return code, nil
		}
		if req.Watch {
			s.dataWatches.add(req.Path, c, watchStandard)
		}
		return jute.ErrOK, &jute.GetDataResponse{Data: n.data, Stat: s.clientStat(n)}

	case jute.OpGetChildren:
		var req jute.GetChildrenRequest
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		n, code := s.readable(c, req.Path, jute.PermRead)
		if code != jute.ErrOK {
			return code, nil
		}
		if req.Watch {
			s.childWatches.add(req.Path, c, watchStandard)
		}
		return jute.ErrOK, &jute.GetChildrenResponse{Children: sortedChildren(n)}

	case jute.OpGetChildren2:
		var req jute.GetChildren2Request
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		n, code := s.readable(c, req.Path, jute.PermRead)
		if code != jute.ErrOK {
			return code, nil
		}
		if req.Watch {
			s.childWatches.add(req.Path, c, watchStandard)
		}
		return jute.ErrOK, &jute.GetChildren2Response{Children: sortedChildren(n), Stat: s.clientStat(n)}

	case jute.OpGetACL:
		var req jute.GetACLRequest
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		n, code := s.readable(c, req.Path, jute.PermRead|jute.PermAdmin)
		if code != jute.ErrOK {
			return code, nil
		}
		acl := n.acl
		if !checkACL(n.acl, jute.PermAdmin, c.auth) {
			acl = maskDigests(acl)
		}
		return jute.ErrOK, &jute.GetACLResponse{ACL: acl, Stat: s.clientStat(n)}

	case jute.OpSetWatches:
		var req jute.SetWatches
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		return s.setWatches(c, req.RelativeZxid, req.DataWatches, req.ExistWatches, req.ChildWatches, []string{}, []string{}), nil

	case jute.OpSetWatches2:
		var req jute.SetWatches2
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		return s.setWatches(c, req.RelativeZxid, req.DataWatches, req.ExistWatches, req.ChildWatches,
			req.PersistentWatches, req.PersistentRecursiveWatches), nil

	case jute.OpAddWatch:
		var req jute.AddWatchRequest
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		var mode watchMode
		switch req.Mode {
		case jute.AddWatchPersistent:
			mode = watchPersistent
		case jute.AddWatchPersistentRecursive:
			mode = watchPersistentRecursive
		default:
			return jute.ErrMarshallingError, nil
		}
		s.dataWatches.add(req.Path, c, mode)
		s.childWatches.add(req.Path, c, mode)
		return jute.ErrOK, &jute.ErrorResponse{Err: 0}

	case jute.OpCheckWatches, jute.OpRemoveWatches:
		var req jute.CheckWatchesRequest
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		if req.Type < jute.WatcherTypeChildren || req.Type > jute.WatcherTypeAny {
			return jute.ErrMarshallingError, nil
		}
		found := false
		if req.Type != jute.WatcherTypeData {
			if op == jute.OpRemoveWatches {
				found = s.childWatches.remove(req.Path, c) || found
			} else {
				found = s.childWatches.contains(req.Path, c) || found
			}
		}
		if req.Type != jute.WatcherTypeChildren {
			if op == jute.OpRemoveWatches {
				found = s.dataWatches.remove(req.Path, c) || found
			} else {
				found = s.dataWatches.contains(req.Path, c) || found
			}
		}
		if !found {
			return jute.ErrNoWatcher, nil
		}
		return jute.ErrOK, nil

	case jute.OpGetEphemerals:
		var req jute.GetEphemeralsRequest
		if jute.Decode(body, &req) != nil { // a null prefix means all
			return jute.ErrMarshallingError, nil
		}
		prefix := strings.TrimSpace(req.PrefixPath)
		out := []string{}
		for p := range c.session.ephemerals {
			if prefix == "" || prefix == "/" || strings.HasPrefix(p, req.PrefixPath) {
				out = append(out, p)
			}
		}
		sortStrings(out)
		return jute.ErrOK, &jute.GetEphemeralsResponse{Ephemerals: out}

	case jute.OpGetAllChildrenNumber:
		var req jute.GetAllChildrenNumberRequest
		if !s.decode(body, &req) {
			return jute.ErrMarshallingError, nil
		}
		if _, code := s.readable(c, req.Path, jute.PermRead); code != jute.ErrOK {
			return code, nil
		}
		var n int
		if req.Path == "/" {
			n = len(s.nodes) - 2
		} else {
			for p := range s.nodes {
				if strings.HasPrefix(p, req.Path+"/") {
					n++
				}
			}
		}
		return jute.ErrOK, &jute.GetAllChildrenNumberResponse{TotalNumber: int32(n)}

	case jute.OpWhoAmI:
		info := make([]jute.ClientInfo, 0, len(c.auth))
		for _, id := range c.auth {
			info = append(info, jute.ClientInfo{AuthScheme: id.Scheme, User: userName(id)})
		}
		return jute.ErrOK, &jute.WhoAmIResponse{ClientInfo: info}
	}
	return jute.ErrUnimplemented, nil
}

// readable looks a node up for a read and checks perm (any of the bits).
func (s *Server) readable(c *conn, path string, perm int32) (*node, jute.Error) {
	n := s.nodes[path]
	if n == nil {
		return nil, jute.ErrNoNode
	}
	if !checkACL(n.acl, perm, c.auth) {
		return nil, jute.ErrNoAuth
	}
	return n, jute.ErrOK
}

func (s *Server) singleCreate(c *conn, op int32, kind createKind, a createArgs) (jute.Error, any) {
	tx := s.newTxn()
	path, n, code := s.doCreate(tx, c, kind, a)
	if code != jute.ErrOK {
		return code, nil
	}
	s.commit(tx)
	if op == jute.OpCreate {
		return jute.ErrOK, &jute.CreateResponse{Path: path}
	}
	return jute.ErrOK, &jute.Create2Response{Path: path, Stat: s.clientStat(n)}
}

// setWatches re-registers a reconnecting client's watches, firing at once
// those that would have fired while it was away (DataTree.setWatches). A
// null list stops it with MarshallingError where ZooKeeper meets the null,
// after the lists before it have been processed.
func (s *Server) setWatches(c *conn, rel int64, data, exist, child, persistent, recursive []string) jute.Error {
	if data == nil {
		return jute.ErrMarshallingError
	}
	for _, p := range data {
		n := s.nodes[p]
		switch {
		case n == nil:
			s.sendEvent(c, jute.EventNodeDeleted, p)
		case n.mzxid > rel:
			s.sendEvent(c, jute.EventNodeDataChanged, p)
		default:
			s.dataWatches.add(p, c, watchStandard)
		}
	}
	if exist == nil {
		return jute.ErrMarshallingError
	}
	for _, p := range exist {
		if s.nodes[p] != nil {
			s.sendEvent(c, jute.EventNodeCreated, p)
		} else {
			s.dataWatches.add(p, c, watchStandard)
		}
	}
	if child == nil {
		return jute.ErrMarshallingError
	}
	for _, p := range child {
		n := s.nodes[p]
		switch {
		case n == nil:
			s.sendEvent(c, jute.EventNodeDeleted, p)
		case n.pzxid > rel:
			s.sendEvent(c, jute.EventNodeChildrenChanged, p)
		default:
			s.childWatches.add(p, c, watchStandard)
		}
	}
	if persistent == nil {
		return jute.ErrMarshallingError
	}
	for _, p := range persistent {
		s.childWatches.add(p, c, watchPersistent)
		s.dataWatches.add(p, c, watchPersistent)
	}
	if recursive == nil {
		return jute.ErrMarshallingError
	}
	for _, p := range recursive {
		s.childWatches.add(p, c, watchPersistentRecursive)
		s.dataWatches.add(p, c, watchPersistentRecursive)
	}
	return jute.ErrOK
}

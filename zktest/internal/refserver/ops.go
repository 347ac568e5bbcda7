package refserver

import (
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
	if !validOp(op) || (op == jute.OpCreateContainer && s.cfg.DisableContainers) ||
		((op == jute.OpAddWatch || op == jute.OpSetWatches2) && s.cfg.DisablePersistentWatches) {
		// UnimplementedRequestProcessor: error header with zxid -1, then close.
		r.zxid, r.err, r.close = -1, jute.ErrUnimplemented, true
		return r
	}
	if isWrite(op) && op != jute.OpCloseSession {
		s.takeZxid()
	}
	r.err, r.body = s.dispatch(c, op, body, &r)
	if r.zxid == 0 {
		r.zxid = s.zxid
	}
	return r
}

// dispatch runs one request and returns its error code and response body;
// writes have taken their zxid already. Caller holds s.mu.
func (s *Server) dispatch(c *conn, op int32, body []byte, r *reply) (jute.Error, any) {
	switch op {
	case jute.OpPing:
		return jute.ErrOK, nil

	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		a, ok := s.readCreate(body, op == jute.OpCreateTTL)
		if !ok {
			return jute.ErrMarshallingError, nil
		}
		kind := kindCreate
		switch op {
		case jute.OpCreateContainer:
			kind = kindContainer
		case jute.OpCreateTTL:
			kind = kindTTL
		}
		return s.singleCreate(c, op, kind, a)

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
		a, ok := s.readSetACL(body)
		if !ok {
			return jute.ErrMarshallingError, nil
		}
		n, code := s.doSetACL(c, a.path, a.acl, a.version)
		if code != jute.ErrOK {
			return code, nil
		}
		return jute.ErrOK, &jute.SetACLResponse{Stat: s.clientStat(n)}

	case jute.OpMulti:
		return s.multi(c, body)

	case jute.OpMultiRead:
		return s.multiRead(c, body)

	case jute.OpReconfig:
		// ZooKeeper reads the request before it takes a zxid.
		var req jute.ReconfigRequest
		if !s.decodeLenient(body, &req) {
			s.untakeZxid()
			return jute.ErrMarshallingError, nil
		}
		if !s.cfg.ReconfigEnabled {
			return jute.ErrReconfigDisabled, nil
		}
		// A standalone server cannot change its membership.
		return jute.ErrUnimplemented, nil

	case jute.OpCloseSession:
		s.closeSession(c.session)
		c.session = nil
		r.close = true
		return jute.ErrOK, nil

	case jute.OpSync, jute.OpExists, jute.OpGetData, jute.OpGetChildren, jute.OpGetChildren2, jute.OpGetACL,
		jute.OpGetEphemerals, jute.OpGetAllChildrenNumber, jute.OpWhoAmI:
		return s.read(c, op, body)

	case jute.OpSetWatches, jute.OpSetWatches2, jute.OpAddWatch, jute.OpCheckWatches, jute.OpRemoveWatches:
		return s.watchOp(c, op, body)

	}
	return jute.ErrUnimplemented, nil
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

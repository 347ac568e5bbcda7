package refserver

import (
	"sort"

	"github.com/zkit-dev/zkit/internal/jute"
)

// multi applies a multi request atomically. As in ZooKeeper 3.8, the reply
// header carries no error; each result does. When an op fails, the ops
// before it report OK (0) as an error result, the failing op its own code,
// and the ops after it RuntimeInconsistency; nothing is applied and no
// watch fires. The whole request takes one zxid, applied or not.
func (s *Server) multi(c *conn, body []byte) (jute.Error, any) {
	var req jute.MultiRequest
	if !s.decodeLenient(body, &req) {
		return jute.ErrMarshallingError, nil
	}
	// A multi may not mix reads and writes, nor hold reads at all
	// (MultiOperationRecord and PrepRequestProcessor reject them).
	for _, op := range req.Ops {
		if op.Type == jute.OpGetData || op.Type == jute.OpGetChildren {
			return jute.ErrMarshallingError, nil
		}
	}
	// ZooKeeper reads every op's path (its first field) after taking the
	// multi's zxid and before logging anything: a null one fails the
	// request with a NullPointerException, and no txn is logged.
	for _, op := range req.Ops {
		if _, null := jute.NewDecoder(op.Raw, 0).NullableString(); null {
			s.unlogZxid()
			return jute.ErrMarshallingError, nil
		}
	}
	tx := s.newTxn()
	results := make([]jute.MultiResult, len(req.Ops))
	failed := -1
	for i, op := range req.Ops {
		res, code, fatal := s.multiOp(tx, c, op)
		if fatal {
			s.rollback(tx)
			return jute.ErrMarshallingError, nil
		}
		if code != jute.ErrOK {
			failed = i
			results[i] = jute.MultiResult{Type: jute.OpError, Err: int32(code)}
			break
		}
		results[i] = res
	}
	if failed >= 0 {
		s.rollback(tx)
		for i := range results {
			switch {
			case i < failed:
				results[i] = jute.MultiResult{Type: jute.OpError, Err: int32(jute.ErrOK)}
			case i > failed:
				results[i] = jute.MultiResult{Type: jute.OpError, Err: int32(jute.ErrRuntimeInconsistency)}
			}
		}
		return jute.ErrOK, &jute.MultiResponse{Results: results}
	}
	s.commit(tx)
	return jute.ErrOK, &jute.MultiResponse{Results: results}
}

// multiOp applies one op of a multi. fatal reports a request ZooKeeper
// cannot process at all (it answers MarshallingError for the whole multi).
func (s *Server) multiOp(tx *txn, c *conn, op jute.MultiOp) (res jute.MultiResult, code jute.Error, fatal bool) {
	switch b := op.Body.(type) {
	case *jute.CreateRequest, *jute.CreateTTLRequest:
		// Read again for the null strings of its ACL.
		_, withTTL := b.(*jute.CreateTTLRequest)
		a, ok := s.readCreate(op.Raw, withTTL)
		if !ok {
			return res, jute.ErrOK, true
		}
		kind := kindFromFlags(a.flags)
		switch {
		case kind == kindTTL && !withTTL:
			// A TTL mode in a plain create record: ZooKeeper fails
			// with a ClassCastException, reported as MarshallingError.
			return res, jute.ErrOK, true
		case kind != kindTTL:
			a.ttl = -1 // Op.create drops the ttl for other modes
		}
		return s.multiCreate(tx, c, kind, a)
	case *jute.DeleteRequest:
		code = s.doDelete(tx, c, b.Path, b.Version)
		return jute.MultiResult{Type: jute.OpDelete}, code, false
	case *jute.SetDataRequest:
		n, code := s.doSetData(tx, c, b.Path, b.Data, b.Version)
		if code != jute.ErrOK {
			return res, code, false
		}
		// Stats are taken as each op applies, as DataTree does.
		return jute.MultiResult{Type: jute.OpSetData, Body: &jute.SetDataResponse{Stat: s.clientStat(n)}}, code, false
	case *jute.CheckVersionRequest:
		code = s.doCheck(c, b.Path, b.Version)
		return jute.MultiResult{Type: jute.OpCheck}, code, false
	}
	return res, jute.ErrOK, true
}

func (s *Server) multiCreate(tx *txn, c *conn, kind createKind, a createArgs) (jute.MultiResult, jute.Error, bool) {
	path, n, code := s.doCreate(tx, c, kind, a)
	if code == jute.ErrMarshallingError { // an exception: the whole multi fails
		return jute.MultiResult{}, code, true
	}
	if code != jute.ErrOK {
		return jute.MultiResult{}, code, false
	}
	if kind == kindCreate {
		return jute.MultiResult{Type: jute.OpCreate, Body: &jute.CreateResponse{Path: path}}, jute.ErrOK, false
	}
	return jute.MultiResult{Type: jute.OpCreate2, Body: &jute.Create2Response{Path: path, Stat: s.clientStat(n)}}, jute.ErrOK, false
}

// kindFromFlags is Op.create's choice of txn inside a multi.
func kindFromFlags(flags int32) createKind {
	switch flags {
	case jute.FlagContainer:
		return kindContainer
	case jute.FlagPersistentWithTTL, jute.FlagPersistentSequentialWithTT:
		return kindTTL
	}
	return kindCreate
}

// multiRead answers a multiRead: each getData or getChildren runs on its
// own, failures are per-op error results; no watches are set.
func (s *Server) multiRead(c *conn, body []byte) (jute.Error, any) {
	var req jute.MultiRequest
	if !s.decode(body, &req) {
		return jute.ErrMarshallingError, nil
	}
	results := make([]jute.MultiResult, 0, len(req.Ops))
	for _, op := range req.Ops {
		var path string
		switch b := op.Body.(type) {
		case *jute.GetDataRequest:
			path = b.Path
		case *jute.GetChildrenRequest:
			path = b.Path
		default:
			return jute.ErrMarshallingError, nil
		}
		n, code := s.readable(c, path, jute.PermRead)
		if code != jute.ErrOK {
			results = append(results, jute.MultiResult{Type: jute.OpError, Err: int32(code)})
			continue
		}
		if op.Type == jute.OpGetData {
			results = append(results, jute.MultiResult{Type: jute.OpGetData, Body: &jute.GetDataResponse{Data: n.data, Stat: s.clientStat(n)}})
		} else {
			results = append(results, jute.MultiResult{Type: jute.OpGetChildren, Body: &jute.GetChildrenResponse{Children: sortedChildren(n)}})
		}
	}
	return jute.ErrOK, &jute.MultiResponse{Results: results}
}

func sortStrings(v []string) { sort.Strings(v) }

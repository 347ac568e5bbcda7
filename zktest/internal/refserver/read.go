package refserver

import (
	"strings"

	"github.com/zkit-dev/zkit/internal/jute"
)

// read answers the requests that change nothing (FinalRequestProcessor's
// read cases). Caller holds s.mu.
func (s *Server) read(c *conn, op int32, body []byte) (jute.Error, any) {
	switch op {
	case jute.OpSync:
		var req jute.SyncRequest
		d := jute.NewDecoder(body, 2*s.cfg.MaxBuffer)
		if jute.Unmarshal(d, &req) != nil {
			return jute.ErrMarshallingError, nil
		}
		if d.Nulls() > 0 {
			return jute.ErrOK, nullString{} // echoed as it came
		}
		return jute.ErrOK, &jute.SyncResponse{Path: javaEcho(req.Path)}

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
		if !checkACL(n.acl, jute.PermAdmin, c.auth.list()) {
			acl = maskDigests(acl)
		}
		acl = wireACL(acl)
		return jute.ErrOK, &jute.GetACLResponse{ACL: acl, Stat: s.clientStat(n)}

	case jute.OpGetEphemerals:
		var req jute.GetEphemeralsRequest
		if jute.Decode(body, &req) != nil { // a null prefix means all
			return jute.ErrMarshallingError, nil
		}
		// The prefix is matched as ZooKeeper does: as a Java String,
		// blank or "/" once trimmed (Java's trim) meaning all.
		prefix := javaString(req.PrefixPath)
		all := javaTrim(prefix) == "" || javaTrim(prefix) == "/"
		out := []string{}
		for p := range c.session.ephemerals {
			if all || strings.HasPrefix(p, prefix) {
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
		info := make([]jute.ClientInfo, 0, len(c.auth.list()))
		for _, id := range c.auth.list() {
			info = append(info, jute.ClientInfo{AuthScheme: id.Scheme, User: javaWire(userName(id))})
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
	if !checkACL(n.acl, perm, c.auth.list()) {
		return nil, jute.ErrNoAuth
	}
	return n, jute.ErrOK
}

// nullString is a response holding one null string (sync's reply to a
// null path).
type nullString struct{}

func (nullString) MarshalJute(e *jute.Encoder) { e.Int32(-1) }

package refserver

import (
	"github.com/zkit-dev/zkit/internal/jute"
)

// watchOp answers the requests that manage watches: setWatches(2) after a
// reconnect, addWatch, checkWatches and removeWatches. Caller holds s.mu.
func (s *Server) watchOp(c *conn, op int32, body []byte) (jute.Error, any) {
	switch op {
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
		d := jute.NewDecoder(body, 2*s.cfg.MaxBuffer)
		if jute.Unmarshal(d, &req) != nil {
			return jute.ErrMarshallingError, nil
		}
		if req.Type < jute.WatcherTypeChildren || req.Type > jute.WatcherTypeAny {
			return jute.ErrMarshallingError, nil
		}
		if d.Nulls() > 0 {
			// No watch has a null path: removeWatches finds none,
			// checkWatches fails on it.
			if op == jute.OpRemoveWatches {
				return jute.ErrNoWatcher, nil
			}
			return jute.ErrMarshallingError, nil
		}
		found := false
		for _, t := range []struct {
			skip  int32
			table *watchTable
		}{{jute.WatcherTypeData, s.childWatches}, {jute.WatcherTypeChildren, s.dataWatches}} {
			if req.Type == t.skip {
				continue
			}
			if op == jute.OpRemoveWatches {
				found = t.table.remove(req.Path, c) || found
				continue
			}
			has, ok := t.table.contains(req.Path)
			if !ok {
				return jute.ErrMarshallingError, nil
			}
			found = has || found
		}
		if !found {
			return jute.ErrNoWatcher, nil
		}
		return jute.ErrOK, nil
	}
	return jute.ErrUnimplemented, nil
}

// setWatches re-registers a reconnecting client's watches, firing at once
// those that would have fired while it was away (DataTree.setWatches). A
// null list stops it with MarshallingError where ZooKeeper meets the null,
// after the lists before it have been processed. Paths are taken as Java
// Strings, and an event fired at once names its path as ZooKeeper writes
// it back (see javaString).
func (s *Server) setWatches(c *conn, rel int64, data, exist, child, persistent, recursive []string) jute.Error {
	if data == nil {
		return jute.ErrMarshallingError
	}
	for _, p := range data {
		p = javaString(p)
		n := s.nodes[p]
		switch {
		case n == nil:
			s.sendEvent(c, jute.EventNodeDeleted, javaWire(p))
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
		p = javaString(p)
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
		p = javaString(p)
		n := s.nodes[p]
		switch {
		case n == nil:
			s.sendEvent(c, jute.EventNodeDeleted, javaWire(p))
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

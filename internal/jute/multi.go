package jute

// MultiOp is one operation of a multi (or multiRead) request. Body is a
// *CreateRequest (create, create2, createContainer), *CreateTTLRequest,
// *DeleteRequest, *SetDataRequest, *CheckVersionRequest, *GetChildrenRequest
// or *GetDataRequest.
type MultiOp struct {
	Type int32
	Body any
	// Nulls counts the null strings in Body as decoded (Go reads them
	// as ""); not encoded.
	Nulls int
	// Raw is Body's encoding as decoded, for a reader that must tell
	// null strings apart; not encoded.
	Raw []byte
}

// Path returns the operation's path.
func (op MultiOp) Path() string {
	switch b := op.Body.(type) {
	case *CreateRequest:
		return b.Path
	case *CreateTTLRequest:
		return b.Path
	case *DeleteRequest:
		return b.Path
	case *SetDataRequest:
		return b.Path
	case *CheckVersionRequest:
		return b.Path
	case *GetChildrenRequest:
		return b.Path
	case *GetDataRequest:
		return b.Path
	}
	return ""
}

// MultiRequest is the body of multi (14) and multiRead (22): operations each
// preceded by a MultiHeader, ended by a header with Done set.
type MultiRequest struct {
	Ops []MultiOp
}

// MarshalJute writes the operations and the end marker.
func (r *MultiRequest) MarshalJute(e *Encoder) {
	for _, op := range r.Ops {
		Marshal(e, &MultiHeader{Type: op.Type, Done: false, Err: -1})
		Marshal(e, op.Body)
	}
	Marshal(e, &MultiHeader{Type: -1, Done: true, Err: -1})
}

// UnmarshalJute reads operations up to the end marker. An operation type
// that may not appear in a multi makes the record malformed, as in ZooKeeper.
func (r *MultiRequest) UnmarshalJute(d *Decoder) {
	r.Ops = nil
	var h MultiHeader
	decodeValue(d, valueOf(&h))
	for d.Err() == nil && !h.Done {
		var body any
		switch h.Type {
		case OpCreate, OpCreate2, OpCreateContainer:
			body = &CreateRequest{}
		case OpCreateTTL:
			body = &CreateTTLRequest{}
		case OpDelete:
			body = &DeleteRequest{}
		case OpSetData:
			body = &SetDataRequest{}
		case OpCheck:
			body = &CheckVersionRequest{}
		case OpGetChildren:
			body = &GetChildrenRequest{}
		case OpGetData:
			body = &GetDataRequest{}
		default:
			d.Fail("invalid op type %d in multi", h.Type)
			return
		}
		before, start := d.Nulls(), d.off
		if Unmarshal(d, body) != nil {
			return
		}
		r.Ops = append(r.Ops, MultiOp{Type: h.Type, Body: body, Nulls: d.Nulls() - before, Raw: d.buf[start:d.off:d.off]})
		decodeValue(d, valueOf(&h))
	}
}

// MultiResult is one result of a multi response. Type is the opcode of the
// result (OpError for a failed or skipped operation, with Err set); Body is
// the matching response record or nil (delete, check).
type MultiResult struct {
	Type int32
	Err  int32
	Body any
}

// MultiResponse answers multi and multiRead.
type MultiResponse struct {
	Results []MultiResult
}

// MarshalJute writes the results and the end marker.
func (r *MultiResponse) MarshalJute(e *Encoder) {
	for _, res := range r.Results {
		errCode := int32(0)
		if res.Type == OpError {
			errCode = res.Err
		}
		Marshal(e, &MultiHeader{Type: res.Type, Done: false, Err: errCode})
		switch res.Type {
		case OpError:
			Marshal(e, &ErrorResponse{Err: res.Err})
		case OpDelete, OpCheck:
		default:
			if res.Body != nil {
				Marshal(e, res.Body)
			}
		}
	}
	Marshal(e, &MultiHeader{Type: -1, Done: true, Err: -1})
}

// UnmarshalJute reads results up to the end marker.
func (r *MultiResponse) UnmarshalJute(d *Decoder) {
	r.Results = nil
	var h MultiHeader
	decodeValue(d, valueOf(&h))
	for d.Err() == nil && !h.Done {
		res := MultiResult{Type: h.Type, Err: h.Err}
		switch h.Type {
		case OpCreate:
			res.Body = &CreateResponse{}
		case OpCreate2:
			res.Body = &Create2Response{}
		case OpDelete, OpCheck:
		case OpSetData:
			res.Body = &SetDataResponse{}
		case OpGetChildren:
			res.Body = &GetChildrenResponse{}
		case OpGetData:
			res.Body = &GetDataResponse{}
		case OpError:
			er := &ErrorResponse{}
			if Unmarshal(d, er) != nil {
				return
			}
			res.Err = er.Err
		default:
			d.Fail("invalid result type %d in multi response", h.Type)
			return
		}
		if res.Body != nil && Unmarshal(d, res.Body) != nil {
			return
		}
		r.Results = append(r.Results, res)
		decodeValue(d, valueOf(&h))
	}
}

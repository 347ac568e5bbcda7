package jute

// Hand-written codecs of the records on every call's path: the request
// and reply headers and the bodies of create, delete, exists, getData,
// setData, getChildren, sync and check, both ways (the client encodes the
// requests and decodes the replies, the reference server the other way
// round). The reflective codec is correct for them too, but a client spent
// about a tenth of its CPU in it (reflect.Value calls and allocations per
// field), and a client's CPU is taken from the server's on a small
// machine. Each method writes or reads exactly what the reflective codec
// does, field by field in declaration order (TestHandCodedMatchesReflection).

func (r *Id) MarshalJute(e *Encoder) {
	e.String(r.Scheme)
	e.String(r.ID)
}

func (r *Id) UnmarshalJute(d *Decoder) {
	r.Scheme = d.String()
	r.ID = d.String()
}

func (r *ACL) MarshalJute(e *Encoder) {
	e.Int32(r.Perms)
	r.ID.MarshalJute(e)
}

func (r *ACL) UnmarshalJute(d *Decoder) {
	r.Perms = d.Int32()
	r.ID.UnmarshalJute(d)
}

// marshalACLs writes a vector of ACLs; nil is written as null.
func marshalACLs(e *Encoder, acl []ACL) {
	if acl == nil {
		e.Int32(-1)
		return
	}
	e.Int32(int32(len(acl)))
	for i := range acl {
		acl[i].MarshalJute(e)
	}
}

// unmarshalACLs reads a vector of ACLs; null gives nil.
func unmarshalACLs(d *Decoder) []ACL {
	n := d.vectorLen()
	if n < 0 {
		return nil
	}
	acl := make([]ACL, n)
	for i := range acl {
		acl[i].UnmarshalJute(d)
	}
	return acl
}

func (r *Stat) MarshalJute(e *Encoder) {
	e.Int64(r.Czxid)
	e.Int64(r.Mzxid)
	e.Int64(r.Ctime)
	e.Int64(r.Mtime)
	e.Int32(r.Version)
	e.Int32(r.Cversion)
	e.Int32(r.Aversion)
	e.Int64(r.EphemeralOwner)
	e.Int32(r.DataLength)
	e.Int32(r.NumChildren)
	e.Int64(r.Pzxid)
}

func (r *Stat) UnmarshalJute(d *Decoder) {
	r.Czxid = d.Int64()
	r.Mzxid = d.Int64()
	r.Ctime = d.Int64()
	r.Mtime = d.Int64()
	r.Version = d.Int32()
	r.Cversion = d.Int32()
	r.Aversion = d.Int32()
	r.EphemeralOwner = d.Int64()
	r.DataLength = d.Int32()
	r.NumChildren = d.Int32()
	r.Pzxid = d.Int64()
}

func (r *RequestHeader) MarshalJute(e *Encoder) {
	e.Int32(r.Xid)
	e.Int32(r.Type)
}

func (r *RequestHeader) UnmarshalJute(d *Decoder) {
	r.Xid = d.Int32()
	r.Type = d.Int32()
}

func (r *ReplyHeader) MarshalJute(e *Encoder) {
	e.Int32(r.Xid)
	e.Int64(r.Zxid)
	e.Int32(r.Err)
}

func (r *ReplyHeader) UnmarshalJute(d *Decoder) {
	r.Xid = d.Int32()
	r.Zxid = d.Int64()
	r.Err = d.Int32()
}

func (r *WatcherEvent) MarshalJute(e *Encoder) {
	e.Int32(r.Type)
	e.Int32(r.State)
	e.String(r.Path)
}

func (r *CreateRequest) MarshalJute(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	marshalACLs(e, r.ACL)
	e.Int32(r.Flags)
}

func (r *CreateRequest) UnmarshalJute(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.ACL = unmarshalACLs(d)
	r.Flags = d.Int32()
}

func (r *CreateResponse) MarshalJute(e *Encoder)   { e.String(r.Path) }
func (r *CreateResponse) UnmarshalJute(d *Decoder) { r.Path = d.String() }

func (r *Create2Response) MarshalJute(e *Encoder) {
	e.String(r.Path)
	r.Stat.MarshalJute(e)
}

func (r *Create2Response) UnmarshalJute(d *Decoder) {
	r.Path = d.String()
	r.Stat.UnmarshalJute(d)
}

func (r *DeleteRequest) MarshalJute(e *Encoder) {
	e.String(r.Path)
	e.Int32(r.Version)
}

func (r *DeleteRequest) UnmarshalJute(d *Decoder) {
	r.Path = d.String()
	r.Version = d.Int32()
}

func (r *ExistsRequest) MarshalJute(e *Encoder) {
	e.String(r.Path)
	e.Bool(r.Watch)
}

func (r *ExistsRequest) UnmarshalJute(d *Decoder) {
	r.Path = d.String()
	r.Watch = d.Bool()
}

func (r *ExistsResponse) MarshalJute(e *Encoder)   { r.Stat.MarshalJute(e) }
func (r *ExistsResponse) UnmarshalJute(d *Decoder) { r.Stat.UnmarshalJute(d) }

func (r *GetDataRequest) MarshalJute(e *Encoder) {
	e.String(r.Path)
	e.Bool(r.Watch)
}

func (r *GetDataResponse) MarshalJute(e *Encoder) {
	e.Buffer(r.Data)
	r.Stat.MarshalJute(e)
}

func (r *GetDataResponse) UnmarshalJute(d *Decoder) {
	r.Data = d.Buffer()
	r.Stat.UnmarshalJute(d)
}

func (r *SetDataRequest) MarshalJute(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	e.Int32(r.Version)
}

func (r *SetDataRequest) UnmarshalJute(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.Version = d.Int32()
}

func (r *SetDataResponse) MarshalJute(e *Encoder)   { r.Stat.MarshalJute(e) }
func (r *SetDataResponse) UnmarshalJute(d *Decoder) { r.Stat.UnmarshalJute(d) }

func (r *GetChildrenRequest) MarshalJute(e *Encoder) {
	e.String(r.Path)
	e.Bool(r.Watch)
}

func (r *GetChildrenRequest) UnmarshalJute(d *Decoder) {
	r.Path = d.String()
	r.Watch = d.Bool()
}

func (r *GetChildrenResponse) MarshalJute(e *Encoder)   { e.Strings(r.Children) }
func (r *GetChildrenResponse) UnmarshalJute(d *Decoder) { r.Children = d.Strings() }

func (r *GetChildren2Request) MarshalJute(e *Encoder) {
	e.String(r.Path)
	e.Bool(r.Watch)
}

func (r *GetChildren2Request) UnmarshalJute(d *Decoder) {
	r.Path = d.String()
	r.Watch = d.Bool()
}

func (r *GetChildren2Response) MarshalJute(e *Encoder) {
	e.Strings(r.Children)
	r.Stat.MarshalJute(e)
}

func (r *GetChildren2Response) UnmarshalJute(d *Decoder) {
	r.Children = d.Strings()
	r.Stat.UnmarshalJute(d)
}

func (r *SyncRequest) MarshalJute(e *Encoder)    { e.String(r.Path) }
func (r *SyncRequest) UnmarshalJute(d *Decoder)  { r.Path = d.String() }
func (r *SyncResponse) MarshalJute(e *Encoder)   { e.String(r.Path) }
func (r *SyncResponse) UnmarshalJute(d *Decoder) { r.Path = d.String() }

func (r *CheckVersionRequest) MarshalJute(e *Encoder) {
	e.String(r.Path)
	e.Int32(r.Version)
}

func (r *CheckVersionRequest) UnmarshalJute(d *Decoder) {
	r.Path = d.String()
	r.Version = d.Int32()
}

func (r *ErrorResponse) MarshalJute(e *Encoder)   { e.Int32(r.Err) }
func (r *ErrorResponse) UnmarshalJute(d *Decoder) { r.Err = d.Int32() }

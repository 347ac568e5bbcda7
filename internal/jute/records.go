package jute

// The records of zookeeper.jute (ZooKeeper 3.8) that travel between a client
// and a server. Field order is wire order.

// Id is an authentication identity: a scheme and an id within it.
type Id struct {
	Scheme string
	ID     string
}

// ACL grants Perms to an Id.
type ACL struct {
	Perms int32
	ID    Id
}

// Stat is a znode's metadata as clients see it.
type Stat struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Version        int32
	Cversion       int32
	Aversion       int32
	EphemeralOwner int64
	DataLength     int32
	NumChildren    int32
	Pzxid          int64
}

// ConnectRequest opens or resumes a session. ReadOnly is an optional trailing
// field that newer clients send; HasReadOnly reports whether it was present.
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

// MarshalJute writes the record, with ReadOnly only if HasReadOnly.
func (r *ConnectRequest) MarshalJute(e *Encoder) {
	e.Int32(r.ProtocolVersion)
	e.Int64(r.LastZxidSeen)
	e.Int32(r.TimeOut)
	e.Int64(r.SessionID)
	e.Buffer(r.Passwd)
	if r.HasReadOnly {
		e.Bool(r.ReadOnly)
	}
}

// UnmarshalJute reads the record and the optional trailing ReadOnly.
func (r *ConnectRequest) UnmarshalJute(d *Decoder) {
	r.ProtocolVersion = d.Int32()
	r.LastZxidSeen = d.Int64()
	r.TimeOut = d.Int32()
	r.SessionID = d.Int64()
	r.Passwd = d.Buffer()
	if d.Err() == nil && d.Remaining() > 0 {
		r.ReadOnly = d.Bool()
		r.HasReadOnly = true
	}
}

// ConnectResponse answers a ConnectRequest; ReadOnly is written only if
// HasReadOnly (the server answers old clients without it).
type ConnectResponse struct {
	ProtocolVersion int32
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

// MarshalJute writes the record, with ReadOnly only if HasReadOnly.
func (r *ConnectResponse) MarshalJute(e *Encoder) {
	e.Int32(r.ProtocolVersion)
	e.Int32(r.TimeOut)
	e.Int64(r.SessionID)
	e.Buffer(r.Passwd)
	if r.HasReadOnly {
		e.Bool(r.ReadOnly)
	}
}

// UnmarshalJute reads the record and the optional trailing ReadOnly.
func (r *ConnectResponse) UnmarshalJute(d *Decoder) {
	r.ProtocolVersion = d.Int32()
	r.TimeOut = d.Int32()
	r.SessionID = d.Int64()
	r.Passwd = d.Buffer()
	if d.Err() == nil && d.Remaining() > 0 {
		r.ReadOnly = d.Bool()
		r.HasReadOnly = true
	}
}

// RequestHeader starts every request after the connect.
type RequestHeader struct {
	Xid  int32
	Type int32
}

// ReplyHeader starts every reply and watcher event.
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  int32
}

// MultiHeader separates the operations of a multi request and its results.
type MultiHeader struct {
	Type int32
	Done bool
	Err  int32
}

// AuthPacket is the body of an auth (addAuth) request.
type AuthPacket struct {
	Type   int32
	Scheme string
	Auth   []byte
}

// WatcherEvent is the body of a notification (xid -1).
type WatcherEvent struct {
	Type  int32
	State int32
	Path  string
}

// UnmarshalJute reads the record without reflection: a client's connection
// wrapper reads every watch event that passes.
func (r *WatcherEvent) UnmarshalJute(d *Decoder) {
	r.Type = d.Int32()
	r.State = d.Int32()
	r.Path = d.String()
}

// ErrorResponse carries an error code (multi results, addWatch).
type ErrorResponse struct {
	Err int32
}

// CreateRequest is the body of create, create2 and createContainer.
type CreateRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags int32
}

// CreateTTLRequest is the body of createTTL.
type CreateTTLRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags int32
	TTL   int64
}

// CreateResponse answers create.
type CreateResponse struct {
	Path string
}

// Create2Response answers create2, createContainer and createTTL.
type Create2Response struct {
	Path string
	Stat Stat
}

// DeleteRequest is the body of delete.
type DeleteRequest struct {
	Path    string
	Version int32
}

// ExistsRequest is the body of exists.
type ExistsRequest struct {
	Path  string
	Watch bool
}

// ExistsResponse answers exists.
type ExistsResponse struct {
	Stat Stat
}

// GetDataRequest is the body of getData.
type GetDataRequest struct {
	Path  string
	Watch bool
}

// UnmarshalJute reads the record without reflection: a client's connection
// wrapper reads every reading request that passes.
func (r *GetDataRequest) UnmarshalJute(d *Decoder) {
	r.Path = d.String()
	r.Watch = d.Bool()
}

// GetDataResponse answers getData.
type GetDataResponse struct {
	Data []byte
	Stat Stat
}

// SetDataRequest is the body of setData.
type SetDataRequest struct {
	Path    string
	Data    []byte
	Version int32
}

// SetDataResponse answers setData (and check, which has no stat to send).
type SetDataResponse struct {
	Stat Stat
}

// GetACLRequest is the body of getACL.
type GetACLRequest struct {
	Path string
}

// GetACLResponse answers getACL.
type GetACLResponse struct {
	ACL  []ACL
	Stat Stat
}

// SetACLRequest is the body of setACL.
type SetACLRequest struct {
	Path    string
	ACL     []ACL
	Version int32
}

// SetACLResponse answers setACL.
type SetACLResponse struct {
	Stat Stat
}

// GetChildrenRequest is the body of getChildren.
type GetChildrenRequest struct {
	Path  string
	Watch bool
}

// GetChildrenResponse answers getChildren.
type GetChildrenResponse struct {
	Children []string
}

// GetChildren2Request is the body of getChildren2.
type GetChildren2Request struct {
	Path  string
	Watch bool
}

// GetChildren2Response answers getChildren2.
type GetChildren2Response struct {
	Children []string
	Stat     Stat
}

// SyncRequest is the body of sync.
type SyncRequest struct {
	Path string
}

// SyncResponse answers sync.
type SyncResponse struct {
	Path string
}

// CheckVersionRequest is the body of check.
type CheckVersionRequest struct {
	Path    string
	Version int32
}

// SetWatches re-registers watches after a reconnect (opcode 101).
type SetWatches struct {
	RelativeZxid int64
	DataWatches  []string
	ExistWatches []string
	ChildWatches []string
}

// SetWatches2 is SetWatches with persistent watches (opcode 105).
type SetWatches2 struct {
	RelativeZxid               int64
	DataWatches                []string
	ExistWatches               []string
	ChildWatches               []string
	PersistentWatches          []string
	PersistentRecursiveWatches []string
}

// AddWatchRequest is the body of addWatch.
type AddWatchRequest struct {
	Path string
	Mode int32
}

// CheckWatchesRequest is the body of checkWatches.
type CheckWatchesRequest struct {
	Path string
	Type int32
}

// RemoveWatchesRequest is the body of removeWatches.
type RemoveWatchesRequest struct {
	Path string
	Type int32
}

// GetEphemeralsRequest is the body of getEphemerals.
type GetEphemeralsRequest struct {
	PrefixPath string
}

// GetEphemeralsResponse answers getEphemerals.
type GetEphemeralsResponse struct {
	Ephemerals []string
}

// GetAllChildrenNumberRequest is the body of getAllChildrenNumber.
type GetAllChildrenNumberRequest struct {
	Path string
}

// GetAllChildrenNumberResponse answers getAllChildrenNumber.
type GetAllChildrenNumberResponse struct {
	TotalNumber int32
}

// ClientInfo is one identity in a whoAmI answer.
type ClientInfo struct {
	AuthScheme string
	User       string
}

// WhoAmIResponse answers whoAmI.
type WhoAmIResponse struct {
	ClientInfo []ClientInfo
}

// ReconfigRequest is the body of reconfig. Its lists are comma-separated;
// an empty one goes out null (see MarshalJute).
type ReconfigRequest struct {
	JoiningServers string
	LeavingServers string
	NewMembers     string
	CurConfigID    int64
}

// MarshalJute encodes r as ZooKeeper's own client sends it, an empty list
// null: the server takes a list that is not null as given, and an empty
// NewMembers as a configuration with no server.
func (r *ReconfigRequest) MarshalJute(e *Encoder) {
	for _, list := range []string{r.JoiningServers, r.LeavingServers, r.NewMembers} {
		if list == "" {
			e.Int32(-1)
		} else {
			e.String(list)
		}
	}
	e.Int64(r.CurConfigID)
}

// Empty is the record of requests and responses without a body (ping,
// closeSession, delete's response, ...).
type Empty struct{}

// MarshalJute writes nothing.
func (Empty) MarshalJute(*Encoder) {}

// UnmarshalJute reads nothing.
func (*Empty) UnmarshalJute(*Decoder) {}

package jute

import "reflect"

func valueOf(p any) reflect.Value { return reflect.ValueOf(p).Elem() }

// opRecords maps each opcode to the record types of its request body and of
// its successful response body (nil: no body).
var opRecords = map[int32][2]reflect.Type{
	OpPing:                 {nil, nil},
	OpCreate:               {reflect.TypeFor[CreateRequest](), reflect.TypeFor[CreateResponse]()},
	OpCreate2:              {reflect.TypeFor[CreateRequest](), reflect.TypeFor[Create2Response]()},
	OpCreateContainer:      {reflect.TypeFor[CreateRequest](), reflect.TypeFor[Create2Response]()},
	OpCreateTTL:            {reflect.TypeFor[CreateTTLRequest](), reflect.TypeFor[Create2Response]()},
	OpDelete:               {reflect.TypeFor[DeleteRequest](), nil},
	OpExists:               {reflect.TypeFor[ExistsRequest](), reflect.TypeFor[ExistsResponse]()},
	OpGetData:              {reflect.TypeFor[GetDataRequest](), reflect.TypeFor[GetDataResponse]()},
	OpSetData:              {reflect.TypeFor[SetDataRequest](), reflect.TypeFor[SetDataResponse]()},
	OpGetACL:               {reflect.TypeFor[GetACLRequest](), reflect.TypeFor[GetACLResponse]()},
	OpSetACL:               {reflect.TypeFor[SetACLRequest](), reflect.TypeFor[SetACLResponse]()},
	OpGetChildren:          {reflect.TypeFor[GetChildrenRequest](), reflect.TypeFor[GetChildrenResponse]()},
	OpGetChildren2:         {reflect.TypeFor[GetChildren2Request](), reflect.TypeFor[GetChildren2Response]()},
	OpSync:                 {reflect.TypeFor[SyncRequest](), reflect.TypeFor[SyncResponse]()},
	OpCheck:                {reflect.TypeFor[CheckVersionRequest](), reflect.TypeFor[SetDataResponse]()},
	OpMulti:                {reflect.TypeFor[MultiRequest](), reflect.TypeFor[MultiResponse]()},
	OpMultiRead:            {reflect.TypeFor[MultiRequest](), reflect.TypeFor[MultiResponse]()},
	OpReconfig:             {reflect.TypeFor[ReconfigRequest](), reflect.TypeFor[GetDataResponse]()},
	OpCloseSession:         {nil, nil},
	OpSetWatches:           {reflect.TypeFor[SetWatches](), nil},
	OpSetWatches2:          {reflect.TypeFor[SetWatches2](), nil},
	OpAuth:                 {reflect.TypeFor[AuthPacket](), nil},
	OpAddWatch:             {reflect.TypeFor[AddWatchRequest](), reflect.TypeFor[ErrorResponse]()},
	OpCheckWatches:         {reflect.TypeFor[CheckWatchesRequest](), nil},
	OpRemoveWatches:        {reflect.TypeFor[RemoveWatchesRequest](), nil},
	OpGetEphemerals:        {reflect.TypeFor[GetEphemeralsRequest](), reflect.TypeFor[GetEphemeralsResponse]()},
	OpGetAllChildrenNumber: {reflect.TypeFor[GetAllChildrenNumberRequest](), reflect.TypeFor[GetAllChildrenNumberResponse]()},
	OpWhoAmI:               {nil, reflect.TypeFor[WhoAmIResponse]()},
}

// KnownOp reports whether the codec knows the opcode.
func KnownOp(op int32) bool {
	_, ok := opRecords[op]
	return ok
}

// NewRequest returns a new, zero request body for op: a pointer to its
// record, or *Empty for requests without a body. ok is false for an opcode
// the codec does not know.
func NewRequest(op int32) (rec any, ok bool) {
	t, ok := opRecords[op]
	if !ok {
		return nil, false
	}
	return newRecord(t[0]), true
}

// NewResponse returns a new, zero body of op's successful response: a
// pointer to its record, or *Empty for responses without a body.
func NewResponse(op int32) (rec any, ok bool) {
	t, ok := opRecords[op]
	if !ok {
		return nil, false
	}
	return newRecord(t[1]), true
}

func newRecord(t reflect.Type) any {
	if t == nil {
		return &Empty{}
	}
	return reflect.New(t).Interface()
}

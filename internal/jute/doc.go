// Package jute is zkit's codec for ZooKeeper's wire protocol: the jute
// binary encoding (big-endian int32/int64, one-byte bool, length-prefixed
// buffers and strings where -1 means null, length-prefixed vectors) and the
// request, response and event records that travel inside 4-byte
// length-prefixed frames.
//
// Records are plain Go structs whose exported fields, in declaration order,
// are the jute fields. Marshal and Unmarshal handle int32, int64, bool,
// []byte, string, nested structs and slices of strings or structs; records
// with a shape jute cannot describe in a flat struct (multi requests and
// responses) implement Marshaler and Unmarshaler themselves. The opcode
// tables (NewRequest, NewResponse) map each opcode to its record types, so
// that a server or a probe client has one place that knows the protocol.
//
// Decoding never panics on malformed input: it reports ErrMalformed (for
// truncated data, negative or oversized lengths) and leaves the rest to the
// caller.
package jute

package jute

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sync"
)

// ErrMalformed is returned (wrapped) by Decoder when the input is truncated or
// carries a length that is negative (other than the -1 meaning null) or larger
// than the decoder's limit.
var ErrMalformed = errors.New("jute: malformed record")

// DefaultMaxBuffer is ZooKeeper's default jute.maxbuffer (0xfffff bytes): the
// largest frame a server accepts.
const DefaultMaxBuffer = 0xfffff

// Marshaler is implemented by records that encode themselves.
type Marshaler interface {
	MarshalJute(e *Encoder)
}

// Unmarshaler is implemented by records that decode themselves.
type Unmarshaler interface {
	UnmarshalJute(d *Decoder)
}

// Encoder appends jute-encoded values to a byte slice.
type Encoder struct {
	buf []byte
}

// NewEncoder returns an Encoder that appends to buf (which may be nil).
func NewEncoder(buf []byte) *Encoder { return &Encoder{buf: buf} }

// Bytes returns the encoded bytes.
func (e *Encoder) Bytes() []byte { return e.buf }

// Len returns the number of encoded bytes.
func (e *Encoder) Len() int { return len(e.buf) }

// Reset empties the encoder, keeping its storage.
func (e *Encoder) Reset() { e.buf = e.buf[:0] }

// Int32 appends a big-endian int32.
func (e *Encoder) Int32(v int32) { e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(v)) }

// Int64 appends a big-endian int64.
func (e *Encoder) Int64(v int64) { e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v)) }

// Bool appends one byte, 1 for true and 0 for false.
func (e *Encoder) Bool(v bool) {
	if v {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

// Buffer appends a length-prefixed byte buffer; nil is encoded as length -1.
func (e *Encoder) Buffer(b []byte) {
	if b == nil {
		e.Int32(-1)
		return
	}
	e.Int32(int32(len(b)))
	e.buf = append(e.buf, b...)
}

// String appends a length-prefixed UTF-8 string.
func (e *Encoder) String(s string) {
	e.Int32(int32(len(s)))
	e.buf = append(e.buf, s...)
}

// Strings appends a vector of strings; nil is encoded as length -1.
func (e *Encoder) Strings(v []string) {
	if v == nil {
		e.Int32(-1)
		return
	}
	e.Int32(int32(len(v)))
	for _, s := range v {
		e.String(s)
	}
}

// Raw appends bytes as they are.
func (e *Encoder) Raw(b []byte) { e.buf = append(e.buf, b...) }

// Decoder reads jute-encoded values from a byte slice. The first error sticks:
// after it every read returns a zero value and Err reports it.
type Decoder struct {
	buf   []byte
	off   int
	limit int
	err   error
	nulls int
	java  bool // JavaVectors
}

// NewDecoder returns a Decoder over b whose buffers, strings and vectors may
// be at most maxLen long (0 means DefaultMaxBuffer*2, ZooKeeper's default
// jute.maxbuffer plus its default extra size).
func NewDecoder(b []byte, maxLen int) *Decoder {
	if maxLen <= 0 {
		maxLen = 2 * DefaultMaxBuffer
	}
	return &Decoder{buf: b, limit: maxLen}
}

// JavaVectors makes d read vector counts as ZooKeeper's server does
// (BinaryInputArchive): a negative count other than -1 (null) is an empty
// vector, not malformed input. The reference server reads requests this
// way; clients keep the strict default. It returns d.
func (d *Decoder) JavaVectors() *Decoder {
	d.java = true
	return d
}

// Err returns the first decoding error, if any.
func (d *Decoder) Err() error { return d.err }

// Nulls returns how many null strings (length -1) have been read. Go
// strings cannot be null, so they read as ""; callers that must treat null
// specially (ZooKeeper fails on a null path) check this.
func (d *Decoder) Nulls() int { return d.nulls }

// Remaining returns the number of bytes not read yet.
func (d *Decoder) Remaining() int { return len(d.buf) - d.off }

// Rest returns the bytes not read yet and consumes them.
func (d *Decoder) Rest() []byte {
	b := d.buf[d.off:]
	d.off = len(d.buf)
	return b
}

// Fail records err (wrapping ErrMalformed) unless an error is already set.
func (d *Decoder) Fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
}

func (d *Decoder) need(n int) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || len(d.buf)-d.off < n {
		d.Fail("need %d bytes at offset %d, have %d", n, d.off, len(d.buf)-d.off)
		return false
	}
	return true
}

// Int32 reads a big-endian int32.
func (d *Decoder) Int32() int32 {
	if !d.need(4) {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(d.buf[d.off:]))
	d.off += 4
	return v
}

// Int64 reads a big-endian int64.
func (d *Decoder) Int64() int64 {
	if !d.need(8) {
		return 0
	}
	v := int64(binary.BigEndian.Uint64(d.buf[d.off:]))
	d.off += 8
	return v
}

// Bool reads one byte; any non-zero value is true (as Java's readBoolean).
func (d *Decoder) Bool() bool {
	if !d.need(1) {
		return false
	}
	v := d.buf[d.off] != 0
	d.off++
	return v
}

// length reads a length prefix; it reports -1 for null.
func (d *Decoder) length() int {
	n := d.Int32()
	if d.err != nil {
		return 0
	}
	if n == -1 {
		return -1
	}
	if n < 0 || int(n) > d.limit {
		d.Fail("unreasonable length %d", n)
		return 0
	}
	return int(n)
}

// Buffer reads a length-prefixed buffer; length -1 gives nil, length 0 a
// non-nil empty slice. The result is a copy.
func (d *Decoder) Buffer() []byte {
	n := d.length()
	if d.err != nil || n == -1 {
		return nil
	}
	if !d.need(n) {
		return nil
	}
	b := make([]byte, n)
	copy(b, d.buf[d.off:])
	d.off += n
	return b
}

// String reads a length-prefixed string; null reads as "".
func (d *Decoder) String() string {
	s, _ := d.NullableString()
	return s
}

// NullableString reads a length-prefixed string and reports whether it was
// null (length -1).
func (d *Decoder) NullableString() (string, bool) {
	n := d.length()
	if d.err != nil {
		return "", false
	}
	if n == -1 {
		d.nulls++
		return "", true
	}
	if !d.need(n) {
		return "", false
	}
	s := string(d.buf[d.off : d.off+n])
	d.off += n
	return s, false
}

// Strings reads a vector of strings; null gives nil, and a null element
// reads as "". The elements share one allocation (a lock's or an
// election's every step reads a listing of the queue): the vector is
// checked first, then its bytes are copied into one string once, and each
// element is a slice of it.
func (d *Decoder) Strings() []string {
	n := d.vectorLen()
	if n < 0 {
		return nil
	}
	start := d.off
	for range n {
		l := d.length()
		if l == -1 {
			d.nulls++
		} else if d.need(l) {
			d.off += l
		}
		if d.err != nil {
			return nil
		}
	}
	all := string(d.buf[start:d.off])
	v := make([]string, n)
	off := 0
	for i := range v {
		l := int(int32(binary.BigEndian.Uint32(d.buf[start+off:])))
		off += 4
		if l > 0 {
			v[i] = all[off : off+l]
			off += l
		}
	}
	return v
}

// vectorLen reads a vector length, -1 for null (or on error). Every element
// takes at least one byte, so a count larger than the remaining input is
// malformed; this bounds allocations by the input size.
func (d *Decoder) vectorLen() int {
	if d.java && d.need(4) && int32(binary.BigEndian.Uint32(d.buf[d.off:])) < -1 {
		d.off += 4
		return 0
	}
	n := d.length()
	if d.err != nil || n == -1 {
		return -1
	}
	if n > d.Remaining() {
		d.Fail("vector of %d elements in %d bytes", n, d.Remaining())
		return -1
	}
	return n
}

// Marshal appends the jute encoding of v (a struct, pointer to struct or a
// Marshaler) to e.
func Marshal(e *Encoder, v any) {
	if m, ok := v.(Marshaler); ok {
		m.MarshalJute(e)
		return
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	encodeValue(e, rv)
}

// Unmarshal decodes v (a pointer to a struct or an Unmarshaler) from d and
// returns d.Err().
func Unmarshal(d *Decoder, v any) error {
	if u, ok := v.(Unmarshaler); ok {
		u.UnmarshalJute(d)
		return d.err
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic(fmt.Sprintf("jute: Unmarshal needs a non-nil pointer, got %T", v))
	}
	decodeValue(d, rv.Elem())
	return d.err
}

// Encode returns the jute encoding of the records, one after the other.
func Encode(records ...any) []byte {
	e := NewEncoder(nil)
	for _, r := range records {
		Marshal(e, r)
	}
	return e.Bytes()
}

// Frame returns the records encoded after a 4-byte big-endian length prefix.
func Frame(records ...any) []byte {
	e := NewEncoder(make([]byte, 4, 64))
	for _, r := range records {
		Marshal(e, r)
	}
	b := e.Bytes()
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// Decode decodes b into the records, in order, and returns the first error.
// Trailing bytes are ignored, as ZooKeeper ignores them.
func Decode(b []byte, records ...any) error {
	d := NewDecoder(b, 0)
	for _, r := range records {
		if err := Unmarshal(d, r); err != nil {
			return err
		}
	}
	return nil
}

var (
	marshalerType   = reflect.TypeFor[Marshaler]()
	unmarshalerType = reflect.TypeFor[Unmarshaler]()
	fieldCache      sync.Map // reflect.Type -> []int (exported field indexes)
)

func fieldsOf(t reflect.Type) []int {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]int)
	}
	var idx []int
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).IsExported() {
			idx = append(idx, i)
		}
	}
	fieldCache.Store(t, idx)
	return idx
}

func encodeValue(e *Encoder, v reflect.Value) {
	if v.CanAddr() && v.Addr().Type().Implements(marshalerType) {
		v.Addr().Interface().(Marshaler).MarshalJute(e)
		return
	}
	switch v.Kind() {
	case reflect.Int32:
		e.Int32(int32(v.Int()))
	case reflect.Int64:
		e.Int64(v.Int())
	case reflect.Bool:
		e.Bool(v.Bool())
	case reflect.String:
		e.String(v.String())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			e.Buffer(v.Bytes())
			return
		}
		if v.IsNil() {
			e.Int32(-1)
			return
		}
		e.Int32(int32(v.Len()))
		for i := 0; i < v.Len(); i++ {
			encodeValue(e, v.Index(i))
		}
	case reflect.Struct:
		for _, i := range fieldsOf(v.Type()) {
			encodeValue(e, v.Field(i))
		}
	case reflect.Pointer:
		if v.IsNil() {
			encodeValue(e, reflect.New(v.Type().Elem()).Elem())
			return
		}
		encodeValue(e, v.Elem())
	default:
		panic(fmt.Sprintf("jute: cannot encode %s", v.Type()))
	}
}

func decodeValue(d *Decoder, v reflect.Value) {
	if d.err != nil {
		return
	}
	if v.CanAddr() && v.Addr().Type().Implements(unmarshalerType) {
		v.Addr().Interface().(Unmarshaler).UnmarshalJute(d)
		return
	}
	switch v.Kind() {
	case reflect.Int32:
		v.SetInt(int64(d.Int32()))
	case reflect.Int64:
		v.SetInt(d.Int64())
	case reflect.Bool:
		v.SetBool(d.Bool())
	case reflect.String:
		v.SetString(d.String())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b := d.Buffer()
			if b == nil {
				v.SetZero()
			} else {
				v.SetBytes(b)
			}
			return
		}
		n := d.vectorLen()
		if n < 0 {
			v.SetZero()
			return
		}
		s := reflect.MakeSlice(v.Type(), 0, min(n, 1024))
		for i := 0; i < n && d.err == nil; i++ {
			s = reflect.Append(s, reflect.Zero(v.Type().Elem()))
			decodeValue(d, s.Index(i))
		}
		v.Set(s)
	case reflect.Struct:
		for _, i := range fieldsOf(v.Type()) {
			decodeValue(d, v.Field(i))
		}
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		decodeValue(d, v.Elem())
	default:
		panic(fmt.Sprintf("jute: cannot decode %s", v.Type()))
	}
}

package counter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Encoding is how a counter's value is stored in its node's data.
type Encoding int

const (
	// Long is 8 bytes, big-endian, signed: Curator's DistributedAtomicLong.
	// It is the default.
	Long Encoding = iota
	// Int is 4 bytes, big-endian, signed: Curator's SharedCount. Values
	// outside the int32 range are refused.
	Int
	// Text is the value in decimal ASCII ("42", "-7"): kazoo's Counter and
	// hand-written loops. Values are int64.
	Text
)

var encodingNames = [...]string{Long: "long", Int: "int", Text: "text"}

func (e Encoding) String() string {
	if e >= 0 && int(e) < len(encodingNames) {
		return encodingNames[e]
	}
	return fmt.Sprintf("Encoding(%d)", int(e))
}

// ParseEncoding returns the encoding named "long", "int" or "text".
func ParseEncoding(name string) (Encoding, error) {
	for e, n := range encodingNames {
		if n == name {
			return Encoding(e), nil
		}
	}
	return 0, fmt.Errorf("zkit: unknown counter encoding %q (want long, int or text)", name)
}

func (e Encoding) valid() bool { return e >= Long && e <= Text }

// describe says what the data must look like, for error messages.
func (e Encoding) describe() string {
	switch e {
	case Int:
		return "a 4-byte big-endian int"
	case Text:
		return "a decimal integer"
	}
	return "an 8-byte big-endian long"
}

// bounds is the range of values the encoding can store.
func (e Encoding) bounds() (lo, hi int64) {
	if e == Int {
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func (e Encoding) fits(v int64) bool {
	lo, hi := e.bounds()
	return v >= lo && v <= hi
}

// encode returns v's data. v must fit.
func (e Encoding) encode(v int64) []byte {
	switch e {
	case Int:
		return binary.BigEndian.AppendUint32(nil, uint32(int32(v)))
	case Text:
		return strconv.AppendInt(nil, v, 10)
	}
	return binary.BigEndian.AppendUint64(nil, uint64(v))
}

// decode reads a value. Empty data is 0, as Curator and kazoo read it: a
// node created without data (by EnsurePath, say) is a fresh counter.
func (e Encoding) decode(data []byte) (int64, bool) {
	if len(data) == 0 {
		return 0, true
	}
	switch e {
	case Int:
		if len(data) != 4 {
			return 0, false
		}
		return int64(int32(binary.BigEndian.Uint32(data))), true
	case Text:
		v, err := strconv.ParseInt(string(data), 10, 64)
		return v, err == nil
	}
	if len(data) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(data)), true
}

var (
	// ErrBadData is matched (errors.Is) by every *DataError.
	ErrBadData = errors.New("zkit: counter data does not decode")
	// ErrOverflow is matched by every *OverflowError.
	ErrOverflow = errors.New("zkit: counter overflow")
)

// DataError reports a counter node whose data does not decode with the
// counter's encoding. Nothing was written.
type DataError struct {
	Path     string
	Encoding Encoding
	Len      int // the number of bytes found
}

func (e *DataError) Error() string {
	return fmt.Sprintf("zkit: counter %q: %d bytes of data are not %s (encoding %s); nothing was written",
		e.Path, e.Len, e.Encoding.describe(), e.Encoding)
}

// Is makes errors.Is(err, ErrBadData) true.
func (e *DataError) Is(target error) bool { return target == ErrBadData }

// OverflowError reports an Add whose result would not fit the encoding.
// The counter is left as it was; it does not wrap.
type OverflowError struct {
	Path     string
	Encoding Encoding
	Value    int64 // the counter's value the delta was added to
	Delta    int64
}

func (e *OverflowError) Error() string {
	return fmt.Sprintf("zkit: counter %q: %d %+d overflows the %s encoding; nothing was written",
		e.Path, e.Value, e.Delta, e.Encoding)
}

// Is makes errors.Is(err, ErrOverflow) true.
func (e *OverflowError) Is(target error) bool { return target == ErrOverflow }

// add returns v+delta if it fits the encoding.
func (e Encoding) add(v, delta int64) (int64, bool) {
	s := v + delta
	if (delta > 0 && s < v) || (delta < 0 && s > v) {
		return 0, false // int64 wrapped
	}
	return s, e.fits(s)
}

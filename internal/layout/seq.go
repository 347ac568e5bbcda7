package layout

import (
	"fmt"
	"math"
	"strings"
)

// ParseName reports which of kinds, by their markers (marker(kind)), the
// name of a sequence node ends with, followed by its sequence number:
// decimal digits only, or a negative number exactly as ZooKeeper writes one
// once the directory's counter has wrapped (see ParseSeq). The last marker
// in the name wins, so that a protection id or a prefix cannot be mistaken
// for the sequence number. It returns the index of the kind in kinds.
func ParseName[K any](name string, kinds []K, marker func(K) string) (kind int, seq int64, ok bool) {
	best, kind := -1, -1
	for i, k := range kinds {
		m := marker(k)
		if m == "" {
			continue
		}
		if at := strings.LastIndex(name, m); at > best {
			best, kind = at, i
		}
	}
	if best < 0 {
		return -1, 0, false
	}
	seq, ok = ParseSeq(name[best+len(marker(kinds[kind])):])
	if !ok {
		return -1, 0, false
	}
	return kind, seq, true
}

// ParseSeq parses the server's sequence suffix: decimal digits, at most 19
// (ZooKeeper writes 10, zero-padded), whose value fits in an int64. A
// larger value is not a sequence number: wrapped around, it would sort
// below every real node and block a queue for good. A negative number is
// one only in ZooKeeper's own text for a wrapped int32 counter (its
// cversion, written with "%010d": "-000000001", "-2147483648").
func ParseSeq(s string) (int64, bool) {
	if strings.HasPrefix(s, "-") {
		n, ok := ParseSeq(s[1:])
		if !ok || n == 0 || -n < math.MinInt32 || seqText(-n) != s {
			return 0, false
		}
		return -n, true
	}
	if s == "" || len(s) > 19 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// seqText is ZooKeeper's text for a sequence number ("%010d").
func seqText(seq int64) string { return fmt.Sprintf("%010d", seq) }

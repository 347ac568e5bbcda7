package zktest

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// UniquePathRoot is the parent of every path UniquePath returns.
const UniquePathRoot = "/zktest"

var pathSeq atomic.Int64

// UniquePath returns a znode path no other call in this process returns, for
// the test to use as its root on a shared server: UniquePathRoot, then the
// test's name (subtest separators and characters outside [A-Za-z0-9_.-]
// replaced by '_'), then a process-wide sequence number, for example
// "/zktest/TestLock_reentrant-3". It creates nothing: the test creates the
// node (and /zktest) if it needs them.
func UniquePath(t testing.TB) string {
	return UniquePathRoot + "/" + sanitizeName(t.Name()) + "-" + strconv.FormatInt(pathSeq.Add(1), 10)
}

func sanitizeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "test"
	}
	if b.Len() > 200 {
		return b.String()[:200]
	}
	return b.String()
}

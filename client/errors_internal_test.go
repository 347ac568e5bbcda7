package client

import (
	"net"
	"strings"
	"syscall"
	"testing"
)

// A request whose write fails on a breaking connection gets the raw
// network error from go-zookeeper: it is a closed connection, retryable
// for a read and of unknown outcome for a write.
func TestClassifyBrokenWrite(t *testing.T) {
	broken := &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}
	if err := classify("get", "/a", false, broken); !IsRetryable(err) {
		t.Errorf("read cut by a broken pipe: %v is not retryable", err)
	}
	err := classify("create", "/a", true, broken)
	if !IsOutcomeUnknown(err) || IsRetryable(err) {
		t.Errorf("write cut by a broken pipe: %v, want outcome unknown", err)
	}
	if !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("%v does not say the cause", err)
	}
}

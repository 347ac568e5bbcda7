package cache_test

import (
	"encoding/binary"
	"io"
	"net"
	"time"
)

// relay connects to the server at target and returns the client's end of a
// pipe: what the client writes goes to the server as it is, and every frame
// the server sends passes through pass (first: the connect response), which
// returns what to forward to the client, or nil for nothing. end is the
// relay's side of the pipe, for a pass that forwards frames later.
func relay(target string, timeout time.Duration, pass func(end net.Conn, first bool, b []byte) []byte) (net.Conn, error) {
	server, err := net.DialTimeout("tcp", target, timeout)
	if err != nil {
		return nil, err
	}
	client, end := net.Pipe()
	go func() { io.Copy(server, end); server.Close() }()
	go func() {
		defer end.Close()
		defer server.Close()
		for first := true; ; first = false {
			var l [4]byte
			if _, err := io.ReadFull(server, l[:]); err != nil {
				return
			}
			b := make([]byte, 4+binary.BigEndian.Uint32(l[:]))
			copy(b, l[:])
			if _, err := io.ReadFull(server, b[4:]); err != nil {
				return
			}
			if b = pass(end, first, b); b == nil {
				continue
			}
			if _, err := end.Write(b); err != nil {
				return
			}
		}
	}()
	return client, nil
}

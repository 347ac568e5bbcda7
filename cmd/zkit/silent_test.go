package main

import (
	"net"
	"testing"
	"time"
)

// A server that accepts connections and never answers: --connect-timeout
// bounds the wait, not the client's own handshake timeouts.
func TestConnectTimeoutAgainstSilentServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never answered
		}
	}()
	began := time.Now()
	r := zkit(t, "get", "/x", "--servers", ln.Addr().String(), "--connect-timeout", "3s")
	elapsed := time.Since(began)
	if r.status != exitUnreachable {
		t.Fatalf("status %d, want %d (%q)", r.status, exitUnreachable, r.stderr)
	}
	oneErrorLine(t, r, "within 3s")
	if elapsed < 3*time.Second || elapsed > 3900*time.Millisecond {
		t.Fatalf("returned after %v, want about 3s", elapsed)
	}
}

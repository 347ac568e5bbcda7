package zktest

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"
)

// fakeExpiryServer answers the connections of ExpireSession, the i-th one
// with replies[i] (the last one for every later connection): after reading
// the connect request and the closeSession, it writes what reply returns.
func fakeExpiryServer(t *testing.T, replies ...func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reply := replies[min(i, len(replies)-1)]
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(Scale(10 * time.Second)))
				for range 2 { // the connect request and the closeSession
					if _, err := readFrame(c); err != nil {
						return
					}
				}
				reply(c)
			}()
		}
	}()
	return ln.Addr().String()
}

func frame(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// connectReply is a ConnectResponse for id; id 0 says the session is gone.
func connectReply(id int64) []byte {
	timeout := int32(10000)
	if id == 0 {
		timeout = 0
	}
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(timeout))
	b = binary.BigEndian.AppendUint64(b, uint64(id))
	b = binary.BigEndian.AppendUint32(b, 16)
	b = append(b, make([]byte, 16)...)
	return frame(append(b, 0))
}

// closeReply is the closeSession's reply header with ZooKeeper error code.
func closeReply(code int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, closeXid)
	b = binary.BigEndian.AppendUint64(b, 0)
	return frame(binary.BigEndian.AppendUint32(b, uint32(code)))
}

// A retry that finds the session gone is ExpireSession's success only if
// an earlier attempt's close may have been applied: its replies lost. If
// the server refused the earlier close (here "session moved": the owner
// won its session back), the session ended some other way, and
// ExpireSession says it did not find it.
func TestExpireSessionRetryFindsSessionGone(t *testing.T) {
	const id = 0x1234
	gone := func(c net.Conn) { c.Write(connectReply(0)) }
	for _, tc := range []struct {
		name  string
		first func(c net.Conn)
		ours  bool
	}{
		{"close refused", func(c net.Conn) { c.Write(append(connectReply(id), closeReply(-118)...)) }, false},
		{"close reply lost", func(c net.Conn) { c.Write(connectReply(id)) }, true},
		{"both replies lost", func(c net.Conn) {}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := fakeExpiryServer(t, tc.first, gone)
			ctx, cancel := context.WithTimeout(context.Background(), Scale(10*time.Second))
			defer cancel()
			err := ExpireSession(ctx, addr, id, make([]byte, 16))
			switch {
			case tc.ours && err != nil:
				t.Fatalf("ExpireSession = %v; want nil: the first close may have been applied", err)
			case !tc.ours && !errors.Is(err, ErrSessionNotFound):
				t.Fatalf("ExpireSession = %v; want ErrSessionNotFound: the server refused the only close", err)
			}
		})
	}
}

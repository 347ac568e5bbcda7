package client_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// connect opens a client to servers and closes it when the test ends.
func connect(t *testing.T, servers []string, opts ...client.Option) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(30*time.Second))
	defer cancel()
	c, err := client.Connect(ctx, servers, opts...)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// nextState reads sub until a state change arrives, skipping watch events.
func nextState(t *testing.T, sub *client.Subscription, within time.Duration) client.Event {
	t.Helper()
	deadline := time.After(zktest.Scale(within))
	for {
		select {
		case ev, ok := <-sub.Events():
			require.True(t, ok, "subscription ended")
			if ev.State != client.StateNone {
				return ev
			}
		case <-deadline:
			t.Fatalf("no state change within %v", within)
		}
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(within))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// holdSession attaches sess to a connection of its own to addr (the server
// drops the owner's connection) and pings on it until release, which
// closes that connection without closing the session.
func holdSession(t *testing.T, addr string, sess *client.Session) (release func()) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, zktest.Scale(5*time.Second))
	require.NoError(t, err)
	// ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId,
	// passwd, readOnly.
	body := binary.BigEndian.AppendUint32(nil, 0)
	body = binary.BigEndian.AppendUint64(body, 0)
	body = binary.BigEndian.AppendUint32(body, uint32(sess.Timeout().Milliseconds()))
	body = binary.BigEndian.AppendUint64(body, uint64(sess.ID()))
	body = binary.BigEndian.AppendUint32(body, uint32(len(sess.Password())))
	body = append(body, sess.Password()...)
	body = append(body, 0)
	_, err = conn.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
	require.NoError(t, err)
	var hdr [4]byte
	conn.SetReadDeadline(time.Now().Add(zktest.Scale(5 * time.Second)))
	_, err = io.ReadFull(conn, hdr[:])
	require.NoError(t, err)
	resp := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	_, err = io.ReadFull(conn, resp)
	require.NoError(t, err)
	require.Equal(t, sess.ID(), int64(binary.BigEndian.Uint64(resp[8:])), "the server did not hand over the session")
	conn.SetReadDeadline(time.Time{})
	go io.Copy(io.Discard, conn) // ping replies
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		ping := []byte{0, 0, 0, 8, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 11} // xid -2, opcode 11
		tick := time.NewTicker(sess.Timeout() / 4)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write(ping); err != nil {
					return
				}
			}
		}
	}()
	var once bool
	release = func() {
		if !once {
			once = true
			close(stop)
			<-done
			conn.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// proxied is a client whose connections go through a fault proxy, with an
// ephemeral node of its first session, an observer connected directly to
// the server, and a subscription to its events.
type proxied struct {
	c, observer *client.Client
	proxy       *zktest.Proxy
	sub         *client.Subscription
	sess        *client.Session
	base, node  string
}

func newProxied(t *testing.T, b zktest.Backend, timeout time.Duration) *proxied {
	t.Helper()
	p := &proxied{proxy: zktest.NewProxy(t, b.Addr())}
	p.c = connect(t, []string{p.proxy.Addr()}, client.WithSessionTimeout(timeout))
	p.observer = connect(t, b.Servers)
	ctx := testCtx(t)
	p.sess = p.c.Session()
	p.base = zktest.UniquePath(t)
	require.NoError(t, p.observer.EnsurePath(ctx, p.base))
	var err error
	p.node, err = p.c.Create(ctx, p.base+"/eph", nil, client.Ephemeral)
	require.NoError(t, err)
	p.sub = p.c.Subscribe()
	t.Cleanup(p.sub.Close)
	return p
}

// partition cuts the client off at once: the proxy drops everything from now
// on and resets the open connections, so the client notices immediately
// (instead of after two thirds of its timeout) and its reconnect attempts
// hang in the blackhole until Heal. It returns when the client is suspended,
// with the moment the client says it was suspended.
func (p *proxied) partition(t *testing.T) time.Time {
	t.Helper()
	p.proxy.Blackhole()
	p.proxy.ResetAll()
	require.Equal(t, client.StateSuspended, nextState(t, p.sub, 10*time.Second).State)
	suspended, since := p.c.Suspended()
	require.True(t, suspended)
	return since
}

// nodeExists asks the observer whether the client's ephemeral node exists.
func (p *proxied) nodeExists(t *testing.T) (bool, *client.Stat) {
	t.Helper()
	ok, st, err := p.observer.Exists(testCtx(t), p.node)
	require.NoError(t, err)
	return ok, st
}

// fired reads a one-shot watch's event, failing the test when none comes
// in time.
func fired(t *testing.T, ch <-chan client.WatchEvent) client.WatchEvent {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(zktest.Scale(10 * time.Second)):
		t.Fatal("the watch did not fire")
		return client.WatchEvent{}
	}
}

// watchedBy returns the paths the server at addr keeps a watch on for
// session.
func watchedBy(t *testing.T, addr string, session int64) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(10*time.Second))
	defer cancel()
	paths, err := zktest.WatchedPaths(ctx, addr, session)
	require.NoError(t, err)
	return paths
}

// refusedBeforeSending checks, on both servers, that each of the calls
// fails with an *InputError and sends nothing.
func refusedBeforeSending(t *testing.T, calls func(ctx context.Context, c *client.Client) map[string]func() error) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()})
		sent := proxy.Requests()
		for name, call := range calls(testCtx(t), c) {
			assert.ErrorIs(t, call(), client.ErrInvalidInput, name)
		}
		assert.Equal(t, sent, proxy.Requests(), "nothing sent")
	})
}

// waitConnected returns once a call on c goes through.
func waitConnected(t *testing.T, c *client.Client) {
	t.Helper()
	ctx := testCtx(t)
	require.NoError(t, c.Retry(ctx, func(ctx context.Context) error { return c.Sync(ctx, "/") }))
}

package client_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Calls caught by a disconnect before their request left the client.
//
// A request that never reached the server was not applied, and must never
// be applied later: its caller is told so (a retryable error, not an
// unknown outcome), and may simply make the call again. AddAuth too.

// A call made on a new connection while the credentials the client sends
// again on it are still unanswered waits for them; when that connection
// ends first, the call was never sent. It fails with a retryable error that
// says so, and it is not sent on the next connection either (go-zookeeper
// kept such a request in its send queue and wrote it once it had a
// connection again: the caller had been told the outcome was unknown, and
// a reader after the reconnect could find the write not applied just
// before it was).
func TestCallQueuedBehindCredentialsIsNotSentLater(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		a := newCredentialed(t, b, b.Addr())
		f, c, observer, base := a.f, a.c, a.observer, a.base
		ctx := testCtx(t)

		// A new connection whose credentials the server never hears.
		f.set(func(f *faultConns) { f.stall = true })
		f.breakLatest()
		a.reconnected(t)

		f.set(func(f *faultConns) { f.down = true }) // the next connection waits for the test
		waiting := newDoneSeen(ctx)
		errc := make(chan error, 1)
		go func() {
			_, err := c.SetACL(waiting, base, client.WorldACL(client.PermRead), -1)
			errc <- err
		}()
		select {
		case <-waiting.seen: // the call found the client connected, and waits
		case err := <-errc:
			t.Fatalf("SetACL returned before the connection ended: %v", err)
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("SetACL never waited")
		}
		f.breakLatest()
		var err error
		select {
		case err = <-errc:
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("SetACL did not return after its connection ended")
		}
		require.Error(t, err)
		assert.False(t, client.IsOutcomeUnknown(err), "never sent, so not unknown: %v", err)
		assert.True(t, client.IsRetryable(err), "retryable: %v", err)

		f.set(func(f *faultConns) { f.stall, f.down = false, false })
		a.reconnected(t)
		// Anything still queued from before the reconnect goes out before a
		// call made now: the ACL read now stays.
		acl, _, err := c.GetACL(ctx, base)
		require.NoError(t, err)
		assert.Equal(t, client.OpenACL, acl, "the SetACL refused before the reconnect was applied after it")
		acl, _, err = observer.GetACL(ctx, base)
		require.NoError(t, err)
		assert.Equal(t, client.OpenACL, acl, "the SetACL refused before the reconnect was applied after it")
	})
}

// A call whose request could not be written, because the connection broke
// under it, was never sent: it fails with a retryable error, not an
// unknown outcome, and is not applied.
func TestRequestThatCouldNotBeWrittenIsNotSent(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		f := &faultConns{addr: b.Addr()}
		c := connect(t, b.Servers, client.WithDialer(f.dial))
		observer := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, observer.EnsurePath(ctx, base))
		path := base + "/never-sent"

		f.set(func(f *faultConns) { f.failMark = []byte(path) })
		_, err := c.Create(ctx, path, nil, client.Persistent)
		require.Error(t, err)
		assert.False(t, client.IsOutcomeUnknown(err), "never sent, so not unknown: %v", err)
		assert.True(t, client.IsRetryable(err), "retryable: %v", err)
		assert.ErrorIs(t, err, client.ErrConnectionClosed)
		ok, _, err := observer.Exists(ctx, path)
		require.NoError(t, err)
		assert.False(t, ok, "applied")
	})
}

// Credentials the server accepts after their caller gave up (AddAuth ended
// with its context while the request was on its way) take effect on the
// connection, and are kept: the client sends them again first on every
// connection after, and its calls wait until the server has answered every
// credential sent again, so that they never meet ErrNoAuth for a node
// those credentials open.
func TestCredentialsAnsweredAfterTheCallerLeftAreAwaited(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		proxy := zktest.NewProxy(t, b.Addr())
		a := newCredentialed(t, b, proxy.Addr())
		c := a.c
		ctx := testCtx(t)
		bobs, err := a.observer.Create(ctx, a.base+"/bob", nil, client.Persistent,
			client.WithACL(client.DigestACL(client.PermAll, "bob", "pw")...))
		require.NoError(t, err)

		// The caller gives up once its request is on its way, long before
		// the answer can come back.
		proxy.SetLatency(zktest.Scale(500 * time.Millisecond))
		gaveUp, cancel := context.WithCancel(ctx)
		sent := proxy.Requests()
		errc := make(chan error, 1)
		go func() { errc <- c.AddAuth(gaveUp, "digest", []byte("bob:pw")) }()
		eventually(t, 10*time.Second, "AddAuth sent", func() bool { return proxy.Requests() > sent })
		cancel()
		require.ErrorIs(t, <-errc, context.Canceled)
		proxy.SetLatency(0)
		eventually(t, 10*time.Second, "bob's credentials to take effect", func() bool {
			_, _, err := c.Get(ctx, bobs)
			return err == nil
		})

		// A connection on which the server answers alice's credentials
		// and never hears bob's: the client's calls wait for both.
		a.f.set(func(f *faultConns) { f.passAuths = 1 })
		a.f.breakLatest()
		a.reconnected(t)
		short, stop := context.WithTimeout(ctx, zktest.Scale(500*time.Millisecond))
		defer stop()
		_, _, err = c.Get(short, bobs)
		assert.NotErrorIs(t, err, client.ErrNoAuth, "a call went out before every credential was answered")
	})
}

// An AddAuth whose caller was told it failed before its request left is
// never sent later, on that connection or another: here one that waited
// behind the credentials sent again on a new connection, and gave up (its
// context ended), and one that was still waiting when the connection
// ended. (go-zookeeper kept such a request in its send queue and sent it on
// the next connection.)
func TestAddAuthNotSentIsNeverSentLater(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		a := newCredentialed(t, b, b.Addr())
		f, c, ctx := a.f, a.c, testCtx(t)
		bobs, err := a.observer.Create(ctx, a.base+"/bob", nil, client.Persistent,
			client.WithACL(client.DigestACL(client.PermAll, "bob", "pw")...))
		require.NoError(t, err)
		bob := []byte("bob:pw")
		f.set(func(f *faultConns) { f.countMark = bob })

		// A new connection whose credentials the server never hears: calls
		// wait behind alice's.
		f.set(func(f *faultConns) { f.stall = true })
		f.breakLatest()
		a.reconnected(t)

		addAuth := func(ctx context.Context) <-chan error {
			errc := make(chan error, 1)
			waiting := newDoneSeen(ctx)
			go func() { errc <- c.AddAuth(waiting, "digest", bob) }()
			select {
			case <-waiting.seen: // it found the client connected, and waits
			case err := <-errc:
				t.Fatalf("AddAuth returned before it waited: %v", err)
			case <-time.After(zktest.Scale(10 * time.Second)):
				t.Fatal("AddAuth never waited")
			}
			return errc
		}
		gaveUp, cancel := context.WithCancel(ctx)
		errc := addAuth(gaveUp)
		cancel()
		require.ErrorIs(t, <-errc, context.Canceled)

		f.set(func(f *faultConns) { f.down = true }) // the next connection waits for the test
		errc = addAuth(ctx)
		f.breakLatest()
		select {
		case err = <-errc:
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("AddAuth did not return after its connection ended")
		}
		assert.True(t, client.IsRetryable(err), "not sent, so retryable: %v", err)

		f.set(func(f *faultConns) { f.stall, f.down = false, false })
		a.reconnected(t)
		_, _, err = c.Get(ctx, bobs)
		assert.ErrorIs(t, err, client.ErrNoAuth, "bob's credentials took effect")
		f.breakLatest() // and on a connection later still
		a.reconnected(t)
		_, _, err = c.Get(ctx, bobs)
		assert.ErrorIs(t, err, client.ErrNoAuth, "bob's credentials took effect")
		assert.Zero(t, f.marked(), "bob's credentials were written")

		// Made again, the call succeeds, once.
		require.NoError(t, c.AddAuth(ctx, "digest", bob))
		_, _, err = c.Get(ctx, bobs)
		require.NoError(t, err)
		assert.Equal(t, 1, f.marked())
	})
}

// Credentials the server cannot check (a scheme it has no provider for)
// fail AddAuth with ErrAuthFailed, and the server closes the connection:
// subscribers see AuthFailed, the client reconnects to the same session,
// and it does not send the refused credentials again.
func TestAddAuthRefused(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		f := &faultConns{addr: b.Addr(), countMark: []byte("no-such-scheme")}
		c := connect(t, b.Servers, client.WithDialer(f.dial))
		ctx := testCtx(t)
		sess := c.Session()
		sub := c.Subscribe()
		t.Cleanup(sub.Close)

		err := c.AddAuth(ctx, "no-such-scheme", []byte("x"))
		require.ErrorIs(t, err, client.ErrAuthFailed)
		assert.False(t, client.IsRetryable(err), "%v", err)
		for _, want := range []client.State{client.StateAuthFailed, client.StateSuspended, client.StateReconnected} {
			require.Equal(t, want, nextState(t, sub, 10*time.Second).State)
		}
		assert.Same(t, sess, c.Session(), "the session goes on")
		_, _, err = c.Exists(ctx, "/")
		require.NoError(t, err)
		assert.Equal(t, 1, f.marked(), "the refused credentials were sent again")
	})
}

// credentialed is a client with alice's credentials whose connections go
// through faultConns to addr (b's server, or a proxy to it), an observer
// connected directly, a directory for the test, and a subscription to the
// client's events.
type credentialed struct {
	f           *faultConns
	c, observer *client.Client
	sub         *client.Subscription
	base        string
}

func newCredentialed(t *testing.T, b zktest.Backend, addr string) *credentialed {
	t.Helper()
	a := &credentialed{f: &faultConns{addr: addr}}
	a.c = connect(t, b.Servers, client.WithDialer(a.f.dial), client.WithDigestAuth("alice", "secret"),
		client.WithSessionTimeout(zktest.Scale(10*time.Second)))
	a.observer = connect(t, b.Servers)
	a.base = zktest.UniquePath(t)
	require.NoError(t, a.observer.EnsurePath(testCtx(t), a.base))
	a.sub = a.c.Subscribe()
	t.Cleanup(a.sub.Close)
	return a
}

// reconnected waits until the client, whose connection was broken, is
// connected again.
func (a *credentialed) reconnected(t *testing.T) {
	t.Helper()
	for ev := nextState(t, a.sub, 10*time.Second); ev.State != client.StateReconnected; ev = nextState(t, a.sub, 10*time.Second) {
		require.Equal(t, client.StateSuspended, ev.State)
	}
}

// faultConns opens the client's connections to addr, and breaks them as
// the test says (set):
//
//   - a connection opened while stall is set passes the connect request
//     and swallows everything the client writes after it: the server
//     granted the session and hears nothing more (credentials sent again
//     on it stay unanswered);
//   - a connection opened while passAuths is positive passes that many
//     credentials and swallows the credentials after them: the server
//     hears every other request;
//   - while down is set, dials fail;
//   - failMark makes the next write of a request whose frame holds it
//     fail, with nothing of it sent, as on a connection that broke under
//     it; the connection is closed;
//   - the requests whose frame holds countMark and that reach the server
//     are counted (marked).
type faultConns struct {
	addr string

	mu        sync.Mutex
	stall     bool
	passAuths int
	down      bool
	failMark  []byte
	countMark []byte
	counted   int
	latest    net.Conn
}

// marked returns how many requests holding countMark reached the server.
func (f *faultConns) marked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counted
}

func (f *faultConns) set(change func(f *faultConns)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

func (f *faultConns) dial(network, _ string, timeout time.Duration) (net.Conn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, errors.New("faultConns: down")
	}
	conn, err := net.DialTimeout(network, f.addr, timeout)
	if err != nil {
		return nil, err
	}
	f.latest = conn
	return &faultConn{Conn: conn, f: f, stalled: f.stall, auths: f.passAuths}, nil
}

// breakLatest closes the latest connection.
func (f *faultConns) breakLatest() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latest.Close()
}

type faultConn struct {
	net.Conn
	f       *faultConns
	stalled bool
	auths   int  // credentials still to pass; -1: swallow them; 0: no limit
	wrote   bool // the connect request
}

// opSetAuth is the opcode of credentials.
const opSetAuth = 100

func (c *faultConn) Write(p []byte) (int, error) {
	first := !c.wrote
	c.wrote = true
	if c.stalled && !first {
		return len(p), nil
	}
	if c.auths != 0 && !first && len(p) >= 12 && int32(binary.BigEndian.Uint32(p[8:12])) == opSetAuth {
		if c.auths < 0 {
			return len(p), nil
		}
		c.auths-- // this one passes; at 0, none after it
		if c.auths == 0 {
			c.auths = -1
		}
	}
	c.f.mu.Lock()
	fail := c.f.failMark != nil && !first && bytes.Contains(p, c.f.failMark)
	if fail {
		c.f.failMark = nil
	}
	if !fail && c.f.countMark != nil && bytes.Contains(p, c.f.countMark) {
		c.f.counted++
	}
	c.f.mu.Unlock()
	if fail {
		c.Conn.Close()
		return c.Conn.Write(p) // fails: the connection is closed
	}
	return c.Conn.Write(p)
}

// doneSeen is a context that reports when a call first waits on it: a call
// waits on its context only once it has found the client connected.
type doneSeen struct {
	context.Context
	once sync.Once
	seen chan struct{}
}

func newDoneSeen(ctx context.Context) *doneSeen {
	return &doneSeen{Context: ctx, seen: make(chan struct{})}
}

func (d *doneSeen) Done() <-chan struct{} {
	d.once.Do(func() { close(d.seen) })
	return d.Context.Done()
}

package client_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

func TestTLS(t *testing.T) {
	t.Parallel()
	ca := zktest.NewCA(t)
	zktest.EachTLSBackend(t, ca, func(t *testing.T, b zktest.Backend) {
		// A client that trusts the CA connects, by IP address or by name
		// (the certificate has both), and works.
		t.Run("trusted", func(t *testing.T) {
			_, port, _ := net.SplitHostPort(b.Addr())
			for _, addr := range []string{b.Addr(), net.JoinHostPort("localhost", port)} {
				c := connect(t, []string{addr}, client.WithTLS(ca.ClientTLS()))
				ctx := testCtx(t)
				base := zktest.UniquePath(t)
				require.NoError(t, c.EnsurePath(ctx, base))
				_, err := c.Create(ctx, base+"/eph", []byte("over TLS"), client.Ephemeral)
				require.NoError(t, err)
			}
		})

		// A client that does not trust the server's CA fails at once,
		// saying so, instead of retrying until its context ends.
		t.Run("wrong CA", func(t *testing.T) {
			other := zktest.NewCA(t)
			ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(20*time.Second))
			defer cancel()
			start := time.Now()
			_, err := client.Connect(ctx, b.Servers, client.WithTLS(other.ClientTLS()))
			took := time.Since(start)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "certificate is not trusted")
			var verify *tls.CertificateVerificationError
			assert.ErrorAs(t, err, &verify)
			assert.NotErrorIs(t, err, context.DeadlineExceeded)
			assert.Less(t, took, zktest.Scale(2*time.Second))
			t.Logf("failed after %v: %v", took, err)
		})

		// TLS composes with WithDialer: through a fault proxy, the client
		// reconnects over TLS to the same session; and the server's
		// expiry reaches it.
		t.Run("faults", func(t *testing.T) {
			proxy := zktest.NewProxy(t, b.Addr())
			c := b.Connect(t, client.WithDialer(proxy.Dialer()))
			sess := c.Session()
			sub := c.Subscribe()
			defer sub.Close()
			proxy.ResetAll()
			require.Equal(t, client.StateSuspended, nextState(t, sub, 10*time.Second).State)
			ev := nextState(t, sub, 10*time.Second)
			require.Equal(t, client.StateReconnected, ev.State)
			assert.Same(t, sess, ev.Session)
			b.ExpireSession(t, sess)
			for ev.State != client.StateLost {
				ev = nextState(t, sub, 10*time.Second)
			}
			assert.ErrorIs(t, sess.Err(), client.ErrSessionExpired)
		})

		// A client certificate authenticates its holder as its subject: a
		// creator-only ACL then keeps out a client without a certificate
		// and a client with another one.
		t.Run("x509", func(t *testing.T) {
			alice := b.Connect(t, client.WithTLS(ca.ClientTLS(ca.ClientCert(t, "alice"))))
			bob := b.Connect(t, client.WithTLS(ca.ClientTLS(ca.ClientCert(t, "bob"))))
			anon := b.Connect(t)
			ctx := testCtx(t)
			base := zktest.UniquePath(t)
			require.NoError(t, alice.EnsurePath(ctx, zktest.UniquePathRoot))
			_, err := alice.Create(ctx, base, []byte("v1"), client.Persistent, client.WithACL(client.AuthACL(client.PermAll)...))
			require.NoError(t, err)
			acl, _, err := alice.GetACL(ctx, base)
			require.NoError(t, err)
			assert.Equal(t, client.X509ACL(client.PermAll, "CN=alice"), acl, "the creator-only ACL names the certificate's subject")
			_, err = alice.Create(ctx, base+"/child", nil, client.Persistent, client.WithACL(client.X509ACL(client.PermAll, "CN=alice")...))
			require.NoError(t, err)

			for name, other := range map[string]*client.Client{"bob": bob, "no certificate": anon} {
				_, err := other.Set(ctx, base, []byte("v2"), -1)
				assert.ErrorIs(t, err, client.ErrNoAuth, "%s writes", name)
				_, _, err = other.Get(ctx, base)
				assert.ErrorIs(t, err, client.ErrNoAuth, "%s reads", name)
				assert.ErrorIs(t, other.Delete(ctx, base+"/child", -1), client.ErrNoAuth, "%s deletes", name)
			}
			_, err = alice.Set(ctx, base, []byte("v2"), -1)
			require.NoError(t, err, "the creator writes")
		})
	})
}

// TLS to a plain client port: the server closes the connection on the
// first bytes of the handshake, as it would when restarting, so the client
// retries; when Connect gives up it says what the last attempt saw.
func TestTLSToAPlainPort(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(time.Second))
		defer cancel()
		_, err := client.Connect(ctx, b.Servers, client.WithTLS(nil))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "closed the connection during the handshake (is this its plain client port?)")
	})
}

// A server that answers the handshake with something else than TLS is
// not a TLS server: Connect says so at once.
func TestTLSToAServerWithoutTLS(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(20*time.Second))
	defer cancel()
	start := time.Now()
	_, err = client.Connect(ctx, []string{ln.Addr().String()}, client.WithTLS(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not speak TLS")
	assert.Less(t, time.Since(start), zktest.Scale(2*time.Second))
}

// A server that requires a client certificate refuses a client without
// one, or with one it does not trust; Connect says so at once.
func TestTLSClientCertificateRequired(t *testing.T) {
	t.Parallel()
	ca := zktest.NewCA(t)
	cfg := ca.ServerTLS(t)
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	srv := zktest.NewServer(t, zktest.ServerTLS(cfg))
	other := zktest.NewCA(t)
	for name, certs := range map[string][]tls.Certificate{
		"none":      nil,
		"untrusted": {other.ClientCert(t, "mallory")},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(20*time.Second))
		start := time.Now()
		_, err := client.Connect(ctx, srv.Servers(), client.WithTLS(ca.ClientTLS(certs...)))
		cancel()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "refused the TLS connection", name)
		assert.Less(t, time.Since(start), zktest.Scale(2*time.Second), name)
	}
	c := connect(t, srv.Servers(), client.WithTLS(ca.ClientTLS(ca.ClientCert(t, "alice"))))
	require.NoError(t, c.Sync(testCtx(t), "/"))
}

// Connect's error names the last failure when no server answered in time.
func TestConnectTimeoutSaysWhy(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // nobody listens there now
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(300*time.Millisecond))
	defer cancel()
	_, err = client.Connect(ctx, []string{addr})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "last attempt")
	assert.Contains(t, err.Error(), "refused")
	var op *net.OpError
	assert.False(t, errors.As(err, &op), "the cause is context's, the last attempt is only told: %v", err)
}

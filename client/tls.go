package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
)

// handshakeTLS runs the TLS handshake on conn, a connection to address,
// within handshakeWait, as the wait for the connect response that follows
// (or until the client is closed).
func (c *Client) handshakeTLS(conn net.Conn, address string) (net.Conn, error) {
	cfg := c.cfg.tls
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			host = address
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(conn, cfg)
	ctx, cancel := context.WithTimeout(c.life, handshakeWait(c.cfg.sessionTimeout))
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, explainTLS(address, err)
	}
	return tc, nil
}

// errTLSConfig is matched by TLS errors that retrying cannot fix: a
// certificate the other side does not trust, or a server that does not
// speak TLS.
var errTLSConfig = errors.New("TLS configuration")

type tlsError struct {
	addr, what string
	err        error
}

func (e *tlsError) Error() string   { return fmt.Sprintf("TLS with %s: %s: %v", e.addr, e.what, e.err) }
func (e *tlsError) Unwrap() []error { return []error{errTLSConfig, e.err} }

// explainTLS says what a TLS error means, when it means the configuration
// is wrong.
func explainTLS(addr string, err error) error {
	var verify *tls.CertificateVerificationError
	var header tls.RecordHeaderError
	switch {
	case errors.As(err, &verify):
		return &tlsError{addr, "the server's certificate is not trusted (check the CAs given to WithTLS)", err}
	case errors.As(err, &header):
		return &tlsError{addr, "the server does not speak TLS (is this its plain client port?)", err}
	case refusedByPeer(err):
		return &tlsError{addr, "the server refused the TLS connection (does it trust the client's certificate, if it needs one?)", err}
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		// Also what a server restarting does: not a reason to give up.
		return fmt.Errorf("TLS with %s: the server closed the connection during the handshake (is this its plain client port?): %w", addr, err)
	}
	return fmt.Errorf("TLS with %s: %w", addr, err)
}

// refusedByPeer reports whether err is a TLS alert the server sent.
// crypto/tls reports those as a *net.OpError whose Op is "remote error".
func refusedByPeer(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

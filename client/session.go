package client

import (
	"context"
	"time"
)

// Session is one ZooKeeper session of a Client. It stays valid across
// reconnects to the same session; when the session is lost it ends for good
// and the client goes on with a new Session value.
//
// A session is lost when the server reports it expired, when the client has
// been disconnected for longer than the negotiated session timeout (the
// server will have expired it by then), or when the client is closed.
type Session struct {
	id      int64
	passwd  []byte
	timeout time.Duration
	ctx     context.Context
	cancel  context.CancelCauseFunc
}

func newSession(id int64, passwd []byte, timeout time.Duration) *Session {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Session{id: id, passwd: passwd, timeout: timeout, ctx: ctx, cancel: cancel}
}

// ID is the server-assigned session id; ephemeral nodes created in this
// session have it as their Stat.EphemeralOwner.
func (s *Session) ID() int64 { return s.id }

// Timeout is the session timeout negotiated with the server.
func (s *Session) Timeout() time.Duration { return s.timeout }

// Password is the session password the server issued. With ID it lets
// another connection take the session over (tests use it to make a session
// really expire: see zktest.ExpireSession).
func (s *Session) Password() []byte { return append([]byte(nil), s.passwd...) }

// Done is closed when the session is lost.
func (s *Session) Done() <-chan struct{} { return s.ctx.Done() }

// Context ends when the session is lost; context.Cause tells why
// (an error matching ErrSessionLost, or ErrClosed).
func (s *Session) Context() context.Context { return s.ctx }

// Err is nil while the session lives, then the reason it was lost.
func (s *Session) Err() error { return context.Cause(s.ctx) }

// Alive reports whether the session has not been lost yet.
func (s *Session) Alive() bool { return s.ctx.Err() == nil }

func (s *Session) lose(cause error) { s.cancel(cause) }

package cache

import (
	"fmt"

	"github.com/zkit-dev/zkit/client"
)

// ErrClosed is the error of a cache that was closed: by Close, or with its
// client. It matches client.ErrClosed (errors.Is), so that one check covers
// a closed cache and a closed client; a cache closed with its client says
// so in its error's text too.
var ErrClosed error = closedError{}

type closedError struct{}

func (closedError) Error() string { return "zkit: cache closed" }

// Is makes errors.Is(ErrClosed, client.ErrClosed) true.
func (closedError) Is(target error) bool { return target == client.ErrClosed }

// errClientClosed stops a cache whose client was closed: it matches
// ErrClosed and client.ErrClosed.
var errClientClosed = fmt.Errorf("%w: %w", ErrClosed, client.ErrClosed)

// LimitError stops a cache whose tree grew beyond its limits: more nodes
// or bytes than WithMaxNodes and WithMaxBytes allow, or a node with more
// children than one reply can carry (Unreadable). Nodes and Bytes are what
// it held when it stopped.
type LimitError struct {
	Path     string
	Nodes    int
	Bytes    int64
	MaxNodes int
	MaxBytes int64

	// Unreadable, when not "", is the node the cache could not read: the
	// server's reply (its children, or its data), Reply bytes long, is
	// longer than the client reads, MaxReply: the client's WithMaxBuffer
	// (ZooKeeper's jute.maxbuffer) and 64 KiB (see
	// client.ReplyTooLargeError). ZooKeeper sends such a reply, but no read
	// of that node can succeed until it shrinks.
	Unreadable string
	Reply      int
	MaxReply   int
}

func (e *LimitError) Error() string {
	if e.Unreadable != "" {
		return fmt.Sprintf("zkit: cache %s: %s cannot be read: a reply of %d bytes (limit %d bytes: client.WithMaxBuffer + 64 KiB)",
			e.Path, e.Unreadable, e.Reply, e.MaxReply)
	}
	return fmt.Sprintf("zkit: cache %s: tree too large: %d nodes, %d bytes (limits %d nodes, %d bytes)",
		e.Path, e.Nodes, e.Bytes, e.MaxNodes, e.MaxBytes)
}

// fatalError is an error no reconnect cures: the cache stops with it.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

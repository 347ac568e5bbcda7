package cache

import (
	"errors"
	"fmt"

	"github.com/zkit-dev/zkit/client"
)

// ErrClosed is the error of a cache that was closed: by Close, or with its
// client (the error then matches client.ErrClosed too).
var ErrClosed = errors.New("zkit: cache closed")

// errClientClosed stops a cache whose client was closed: it matches
// ErrClosed and client.ErrClosed.
var errClientClosed = fmt.Errorf("%w: %w", ErrClosed, client.ErrClosed)

// LimitError stops a cache whose tree grew beyond its limits (WithMaxNodes,
// WithMaxBytes). Nodes and Bytes are what it held when it stopped.
type LimitError struct {
	Path     string
	Nodes    int
	Bytes    int64
	MaxNodes int
	MaxBytes int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("zkit: cache %s: tree too large: %d nodes, %d bytes (limits %d nodes, %d bytes)",
		e.Path, e.Nodes, e.Bytes, e.MaxNodes, e.MaxBytes)
}

// fatalError is an error no reconnect cures: the cache stops with it.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

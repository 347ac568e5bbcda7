package client

import (
	"fmt"
	"unicode/utf8"
)

// DefaultMaxBuffer is ZooKeeper's default jute.maxbuffer (1 MB - 1): the
// server drops the connection of a client that sends a larger request. The
// client refuses such requests itself, before sending; change the limit with
// WithMaxBuffer when the ensemble is configured otherwise.
const DefaultMaxBuffer = 0xfffff

// requestOverhead bounds what a request adds to its path and data: headers,
// lengths, flags and a small ACL.
const requestOverhead = 512

// MaxData is the largest payload a client sends for path under the
// default limit and outside a namespace. A client's own limit is c.MaxData.
func MaxData(path string) int { return DefaultMaxBuffer - requestOverhead - len(path) }

// MaxData is the largest payload c sends for path: its limit
// (WithMaxBuffer) less the path as the server gets it, inside c's
// namespace.
func (c *Client) MaxData(path string) int {
	return c.cfg.maxBuffer - requestOverhead - len(c.cfg.namespace) - len(path)
}

// ValidatePath checks path as ZooKeeper's PathUtils does: absolute, no empty,
// "." or ".." component, no trailing slash (unless sequential: the server
// appends the sequence number), no control or unassigned characters,
// none outside the Basic Multilingual Plane (the server refuses them).
// It returns a reason, or "" when the path is valid.
func ValidatePath(path string, sequential bool) string {
	if path == "" {
		return "path is empty"
	}
	if path[0] != '/' {
		return "path must start with /"
	}
	if len(path) == 1 {
		if sequential {
			return "sequential node needs a name prefix or parent"
		}
		return ""
	}
	if path[len(path)-1] == '/' && !sequential {
		return "path must not end with /"
	}
	if !utf8.ValidString(path) {
		return "path is not valid UTF-8"
	}
	start := 1
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		comp := path[start:i]
		last := i == len(path)
		switch {
		case comp == "" && !(last && sequential):
			return "empty node name (//)"
		case comp == "." || comp == "..":
			return fmt.Sprintf("relative component %q", comp)
		}
		start = i + 1
	}
	// The server checks UTF-16 units, as Java holds the path: a character
	// outside the Basic Multilingual Plane is a surrogate pair there, in
	// the refused range 0xd800..0xf8ff.
	for i, r := range path {
		if r == 0 || (r > 0 && r < 0x20) || (r >= 0x7f && r <= 0x9f) ||
			(r >= 0xd800 && r <= 0xf8ff) || r >= 0xfff0 {
			return fmt.Sprintf("invalid character %U at byte %d", r, i)
		}
	}
	return ""
}

// CheckPath returns an *InputError naming op when path is not a valid node
// path (see ValidatePath), and nil otherwise. Recipes check their paths
// with it before sending anything.
func CheckPath(op, path string) error {
	if reason := ValidatePath(path, false); reason != "" {
		return &InputError{Op: op, Path: path, Reason: reason}
	}
	return nil
}

// checkPath is the first thing every call does: it refuses calls on a
// closed client and invalid paths, before anything is sent.
func (c *Client) checkPath(op, path string, sequential bool) error {
	if c.life != nil && c.life.Err() != nil {
		return fmt.Errorf("zkit: %s %q: %w", op, path, ErrClosed)
	}
	if reason := ValidatePath(path, sequential); reason != "" {
		return &InputError{Op: op, Path: path, Reason: reason}
	}
	return nil
}

func (c *Client) checkData(op, path string, data []byte) error {
	if len(data) > c.MaxData(path) {
		return &InputError{Op: op, Path: path, Reason: fmt.Sprintf(
			"data is %d bytes: the request would exceed the server's %d-byte limit (jute.maxbuffer)",
			len(data), c.cfg.maxBuffer)}
	}
	return nil
}

func checkVersion(op, path string, version int32) error {
	if version < -1 {
		return &InputError{Op: op, Path: path, Reason: fmt.Sprintf("version %d: want -1 (any) or >= 0", version)}
	}
	return nil
}

// checkDeletable refuses a delete of "/": the server's root, or in a
// namespace the namespace's own node, which the client's paths live in.
func checkDeletable(op, path string) error {
	if path == "/" {
		return &InputError{Op: op, Path: path, Reason: "the root (of the namespace) cannot be deleted"}
	}
	return nil
}

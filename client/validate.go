package client

import (
	"fmt"
	"unicode/utf8"
)

// DefaultMaxDataSize is the largest znode payload sent by default: the
// server's default jute.maxbuffer of 1 MB. Change it with WithMaxDataSize
// when the ensemble is configured otherwise.
const DefaultMaxDataSize = 1 << 20

// ValidatePath checks path as ZooKeeper's PathUtils does: absolute, no empty,
// "." or ".." component, no trailing slash (unless sequential: the server
// appends the sequence number), no control or unassigned characters.
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
	for i, r := range path {
		if r == 0 || (r > 0 && r < 0x20) || (r >= 0x7f && r <= 0x9f) ||
			(r >= 0xd800 && r <= 0xf8ff) || (r >= 0xfff0 && r <= 0xffff) {
			return fmt.Sprintf("invalid character %U at byte %d", r, i)
		}
	}
	return ""
}

func (c *Client) checkPath(op, path string, sequential bool) error {
	if reason := ValidatePath(path, sequential); reason != "" {
		return &InputError{Op: op, Path: path, Reason: reason}
	}
	return nil
}

func (c *Client) checkData(op, path string, data []byte) error {
	if len(data) > c.cfg.maxDataSize {
		return &InputError{Op: op, Path: path,
			Reason: fmt.Sprintf("data is %d bytes, over the %d-byte limit", len(data), c.cfg.maxDataSize)}
	}
	return nil
}

func checkVersion(op, path string, version int32) error {
	if version < -1 {
		return &InputError{Op: op, Path: path, Reason: fmt.Sprintf("version %d: want -1 (any) or >= 0", version)}
	}
	return nil
}

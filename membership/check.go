package membership

import (
	"fmt"
	"strings"

	"github.com/zkit-dev/zkit/client"
)

// CheckID returns an *client.InputError when path is not a valid group
// path or id not a valid member id: a single non-empty node name, not "."
// or "..", without "/". Join checks the same; CheckID lets a caller
// refuse bad input before it connects.
func CheckID(path, id string) error {
	if err := checkPath("join", path); err != nil {
		return err
	}
	var reason string
	switch {
	case id == "":
		reason = "empty member id"
	case strings.Contains(id, "/"):
		reason = fmt.Sprintf("member id %q contains /", id)
	default:
		if r := client.ValidatePath(client.JoinPath(path, id), false); r != "" {
			reason = fmt.Sprintf("member id %q: %s", id, r)
		}
	}
	if reason != "" {
		return &client.InputError{Op: "join", Path: path, Reason: reason}
	}
	return nil
}

// checkJoin checks what Join is given: the path, the id and the size of
// the data.
func checkJoin(path, id string, data []byte) error {
	if err := CheckID(path, id); err != nil {
		return err
	}
	node := client.JoinPath(path, id)
	if max := client.MaxData(node); len(data) > max {
		return &client.InputError{Op: "join", Path: node, Reason: fmt.Sprintf("data of %d bytes is over the %d-byte limit", len(data), max)}
	}
	return nil
}

func checkPath(op, path string) error {
	if reason := client.ValidatePath(path, false); reason != "" {
		return &client.InputError{Op: op, Path: path, Reason: reason}
	}
	return nil
}

package configwatch

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
)

// readyName is the node whose existence says the keys form a complete
// configuration (the paper's "ready" znode; layout.ReadyFlag, which
// another recipe refuses to find on its path).
const readyName = layout.ReadyFlag

// Values is a configuration as it is stored: one entry per key, holding the
// data of the key's node, a JSON value. To Set, a nil value deletes the
// key.
type Values map[string][]byte

// Decoder turns the values of a complete snapshot into the caller's type.
type Decoder[T any] func(Values) (T, error)

// JSON is the default Decoder: it decodes the JSON object whose members
// are the keys, with their values, into a T (a struct with json tags, a
// map, ...). A value that is not valid JSON is taken as a string (text
// written by a publisher that does not encode), and an empty one as "";
// one that is neither JSON nor UTF-8 text is an error (Raw reads it as
// stored).
func JSON[T any](v Values) (T, error) {
	var out T
	doc, err := Document(v)
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(doc, &out)
	return out, err
}

// Raw is the Decoder that keeps the values as they are stored.
func Raw(v Values) (Values, error) { return v, nil }

// Document returns the configuration as one JSON object, its members the
// keys in sorted order (see JSON for values that are not JSON, and the
// error for values that are not UTF-8 text either).
func Document(v Values) ([]byte, error) {
	obj := make(map[string]json.RawMessage, len(v))
	for k, data := range v {
		switch {
		case json.Valid(data):
			obj[k] = data
		case utf8.Valid(data):
			obj[k], _ = json.Marshal(string(data))
		default:
			return nil, fmt.Errorf("zkit: config key %q: value is neither JSON nor UTF-8 text", k)
		}
	}
	return json.Marshal(obj)
}

// Encode turns v, anything that encodes as a JSON object, into Values: one
// key per member of the object.
func Encode(v any) (Values, error) {
	doc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(doc, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("zkit: config: %T does not encode as a JSON object", v)
	}
	out := make(Values, len(obj))
	for k, raw := range obj {
		out[k] = raw
	}
	return out, nil
}

// CheckKey returns an *client.InputError when key cannot be a key of the
// configuration at path: empty, "ready" (the flag's node), with a "/", or
// not a valid node name. Set and Publish check the same; CheckKey lets a
// caller refuse bad input before it connects.
func CheckKey(path, key string) error {
	if err := checkPath("config set", path); err != nil {
		return err
	}
	return checkKey("config set", path, key)
}

// checkKey refuses a key that cannot name a node next to ready.
func checkKey(op, path, key string) error {
	reason := ""
	switch {
	case key == "":
		reason = "empty key"
	case key == readyName:
		reason = fmt.Sprintf("key %q is the ready flag's node", readyName)
	case strings.Contains(key, "/"):
		reason = fmt.Sprintf("key %q contains a slash", key)
	default:
		if r := client.ValidatePath(client.JoinPath(path, key), false); r != "" {
			reason = fmt.Sprintf("key %q: %s", key, r)
		}
	}
	if reason != "" {
		return &client.InputError{Op: op, Path: path, Reason: reason}
	}
	return nil
}

// checkPath refuses a configuration path that cannot hold keys.
func checkPath(op, path string) error {
	if reason := client.ValidatePath(path, false); reason != "" {
		return &client.InputError{Op: op, Path: path, Reason: reason}
	}
	if path == "/" {
		return &client.InputError{Op: op, Path: path, Reason: "a configuration needs a node of its own, not the root"}
	}
	return nil
}

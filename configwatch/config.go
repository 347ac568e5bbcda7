package configwatch

import (
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Config is the configuration at one path, read as T: its keys are the
// nodes under the path, and its ready node says when they form a complete
// configuration. It is safe for concurrent use and holds nothing: a
// publish's nodes are persistent, so a configuration outlives the session
// that published it, and the loss of a session costs a reader nothing but
// a read under the next one.
type Config[T any] struct {
	c      *client.Client
	path   string
	decode Decoder[T]
	cfg    config
}

// New returns the configuration at path, read with decode: JSON[T] for a
// struct or map whose members are the keys, Raw for the values as they are
// stored, or a Decoder of your own. T is inferred from decode:
//
//	cfg := configwatch.New(c, "/app/config", configwatch.JSON[AppConfig]) // *Config[AppConfig]
//
// New does no I/O. The path, the values to publish and the decoder are
// checked by the methods that use them, before anything is sent: a nil
// decoder is an *client.InputError from Get and Watch (Set and Publish do
// not decode).
func New[T any](c *client.Client, path string, decode Decoder[T], opts ...Option) *Config[T] {
	return &Config[T]{c: c, path: path, decode: decode, cfg: recipes.Apply(opts)}
}

// Path is the configuration node.
func (k *Config[T]) Path() string { return k.path }

// checkRead refuses a read whose path or decoder cannot work.
func (k *Config[T]) checkRead(op string) error {
	if err := checkPath(op, k.path); err != nil {
		return err
	}
	if k.decode == nil {
		return &client.InputError{Op: op, Path: k.path, Reason: "no decoder: give New configwatch.JSON[T], configwatch.Raw or a Decoder of your own"}
	}
	return nil
}

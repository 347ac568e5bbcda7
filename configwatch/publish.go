package configwatch

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Set publishes values: each key gets its value (a nil value deletes the
// key), and keys not named keep theirs. It returns the zxid of the
// publish, the Zxid of the snapshots that reflect it.
//
// Without WithAtomic it follows the paper's ready-flag protocol: delete
// ready, write the keys, create ready; readers wait meanwhile. Publishers
// must then take turns (one leader, or a lock): two flag publishes that
// overlap can expose a mix of both. A publish that fails midway leaves
// ready missing and the keys it wrote so far written: readers keep their
// last snapshot until a publish completes, and the publish that completes
// next (with the ready flag or atomically) carries those keys with it, as
// Set keeps every key it does not name. After a failed Set, repeat it (or
// Publish the whole configuration) before publishing anything else, or the
// next snapshot mixes part of the failed publish with the configuration
// before it.
//
// Every write is idempotent, so Set rides out lost connections, lost
// replies and lost sessions: it writes again under the next connection or
// session, for as long as ctx lives. A publisher that may publish only
// while it holds something (a leader's term, a lock) passes a ctx that
// ends with it.
//
// Errors name the path, once: an *client.InputError for an invalid
// path or key or a value over the request limit, before anything is sent;
// with WithAtomic, one for a publish over the limit, before anything is
// written (only the listing of the keys is sent); an error matching
// recipes.ErrOtherRecipe, before anything is written, when the path holds
// another recipe's nodes (see the package documentation); an error
// matching client.ErrClosed once the client is closed; ctx's error; or
// the server's (client.ErrNoAuth, ...).
func (k *Config[T]) Set(ctx context.Context, values Values) (int64, error) {
	return k.publish(ctx, "config set", values, false)
}

// Publish replaces the configuration with values: keys not in values are
// deleted. Otherwise it is Set.
func (k *Config[T]) Publish(ctx context.Context, values Values) (int64, error) {
	return k.publish(ctx, "config publish", values, true)
}

func (k *Config[T]) publish(ctx context.Context, op string, values Values, replace bool) (int64, error) {
	p, err := newPublisher(k.c, op, k.path, values, replace, k.cfg)
	if err != nil {
		return 0, err
	}
	var zxid int64
	if k.cfg.atomic {
		zxid, err = p.atomic(ctx, op)
	} else {
		zxid, err = p.flagged(ctx)
	}
	if err != nil {
		return 0, recipes.Wrap(op, k.path, err)
	}
	k.cfg.Log().Debug("zkit: configuration published", "path", k.path, "zxid", zxid, "atomic", k.cfg.atomic)
	return zxid, nil
}

// publisher is one publish in progress.
type publisher struct {
	c       *client.Client
	path    string
	ready   string
	values  Values
	keys    []string // of values, sorted
	replace bool
	cfg     config
}

// newPublisher checks the input of a publish: nothing is sent before it
// passes.
func newPublisher(c *client.Client, op, path string, values Values, replace bool, cfg config) (*publisher, error) {
	if err := checkPath(op, path); err != nil {
		return nil, err
	}
	p := &publisher{c: c, path: path, ready: client.JoinPath(path, readyName), values: values, replace: replace, cfg: cfg}
	for k, v := range values {
		if err := checkKey(op, path, k); err != nil {
			return nil, err
		}
		if max := c.MaxData(client.JoinPath(path, k)); len(v) > max {
			return nil, &client.InputError{Op: op, Path: path, Reason: fmt.Sprintf("key %q: value is %d bytes, over the %d-byte limit of a request", k, len(v), max)}
		}
		p.keys = append(p.keys, k)
	}
	slices.Sort(p.keys)
	return p, nil
}

// flagged publishes with the ready flag.
func (p *publisher) flagged(ctx context.Context) (int64, error) {
	stored, _, err := p.list(ctx)
	if err != nil {
		return 0, err
	}
	if err := p.retry(ctx, func(ctx context.Context) error { return ignore(p.c.Delete(ctx, p.ready, -1), client.ErrNoNode) }); err != nil {
		return 0, err
	}
	for _, k := range p.keys {
		if err := p.write(ctx, k, p.values[k], stored[k]); err != nil {
			return 0, err
		}
	}
	if p.replace {
		for _, k := range sortedKeys(stored) {
			if _, keep := p.values[k]; !keep {
				if err := p.write(ctx, k, nil, true); err != nil {
					return 0, err
				}
			}
		}
	}
	return p.raise(ctx)
}

// write stores one key (nil: deletes it). exists is what the listing
// said; if it is out of date the other operation is used.
func (p *publisher) write(ctx context.Context, key string, value []byte, exists bool) error {
	node := client.JoinPath(p.path, key)
	return p.retry(ctx, func(ctx context.Context) error {
		if value == nil {
			return ignore(p.c.Delete(ctx, node, -1), client.ErrNoNode)
		}
		if exists {
			_, err := p.c.Set(ctx, node, value, -1)
			if !errors.Is(err, client.ErrNoNode) {
				return err
			}
			exists = false
		}
		_, err := p.c.Create(ctx, node, value, client.Persistent, p.cfg.CreateOptions()...)
		if errors.Is(err, client.ErrNodeExists) {
			exists = true
			_, err = p.c.Set(ctx, node, value, -1)
		}
		return err
	})
}

// raise creates ready, and returns its zxid: the publish is complete.
func (p *publisher) raise(ctx context.Context) (int64, error) {
	var zxid int64
	err := p.retry(ctx, func(ctx context.Context) error {
		res, err := p.c.Multi(ctx, client.CreateOp(p.ready, nil, client.Persistent, p.cfg.ACL...), client.SetOp(p.ready, nil, 0))
		if errors.Is(err, client.ErrNodeExists) {
			// Created by this publish, if a reply was lost.
			var st *client.Stat
			if _, st, err = p.c.Exists(ctx, p.ready); st != nil {
				zxid = st.Mzxid
			}
			return err
		}
		if err == nil {
			zxid = res[1].Stat.Mzxid
		}
		return err
	})
	return zxid, err
}

// atomic publishes in one multi: the keys' writes, and a write to ready
// (creating it if needed) that tells readers a publish happened. The
// first publish at the path creates the configuration node in the same
// multi, so that a publish refused as too large leaves no configuration
// node behind (Get would wait for a publish instead of saying there is
// none).
func (p *publisher) atomic(ctx context.Context, op string) (int64, error) {
	var b client.Backoff
	for {
		stored, hasReady, err := p.children(ctx)
		missing := errors.Is(err, client.ErrNoNode)
		if err != nil && !missing {
			return 0, err
		}
		ops := p.ops(stored, hasReady)
		if missing {
			ops = append([]client.Op{client.CreateOp(p.path, nil, client.Persistent, p.cfg.ACL...)}, ops...)
		}
		var res []client.OpResult
		err = p.retry(ctx, func(ctx context.Context) (err error) {
			res, err = p.c.Multi(ctx, ops...)
			return err
		})
		var me *client.MultiError
		var ie *client.InputError
		switch {
		case err == nil:
			return res[len(res)-1].Stat.Mzxid, nil
		case errors.As(err, &ie) && ie.Op == "multi":
			// Multi refuses a request over the server's limit before
			// sending it; the ready flag has no such limit.
			return 0, &client.InputError{Op: op, Path: p.path, Reason: ie.Reason + "; publish without WithAtomic"}
		case missing && errors.As(err, &me) && me.Index == 0 && errors.Is(err, client.ErrNoNode):
			// A parent of the configuration node is missing.
			parent, _ := client.SplitPath(p.path)
			if err := p.c.EnsurePath(ctx, parent); err != nil {
				return 0, err
			}
			continue
		case !errors.As(err, &me) || !errors.Is(err, client.ErrNoNode) && !errors.Is(err, client.ErrNodeExists):
			return 0, err
		}
		// The keys changed since the listing (another publisher, or this
		// multi applied before its reply was lost): list and build the
		// transaction again.
		if err := b.Wait(ctx); err != nil {
			return 0, err
		}
	}
}

// ops is the multi of an atomic publish, given the stored keys.
func (p *publisher) ops(stored map[string]bool, hasReady bool) []client.Op {
	var ops []client.Op
	for _, k := range p.keys {
		node, v := client.JoinPath(p.path, k), p.values[k]
		switch {
		case v == nil && stored[k]:
			ops = append(ops, client.DeleteOp(node, -1))
		case v == nil:
		case stored[k]:
			ops = append(ops, client.SetOp(node, v, -1))
		default:
			ops = append(ops, client.CreateOp(node, v, client.Persistent, p.cfg.ACL...))
		}
	}
	if p.replace {
		for _, k := range sortedKeys(stored) {
			if _, keep := p.values[k]; !keep {
				ops = append(ops, client.DeleteOp(client.JoinPath(p.path, k), -1))
			}
		}
	}
	if hasReady {
		return append(ops, client.SetOp(p.ready, nil, -1))
	}
	return append(ops, client.CreateOp(p.ready, nil, client.Persistent, p.cfg.ACL...), client.SetOp(p.ready, nil, 0))
}

// list returns the stored keys and whether ready exists, creating the
// configuration node when it is missing (its missing ancestors get the
// client's default ACL).
func (p *publisher) list(ctx context.Context) (map[string]bool, bool, error) {
	stored, hasReady, err := p.children(ctx)
	if errors.Is(err, client.ErrNoNode) {
		parent, _ := client.SplitPath(p.path)
		if err = p.c.EnsurePath(ctx, parent); err == nil {
			err = p.c.CreateDir(ctx, p.path, client.Persistent, p.cfg.CreateOptions()...)
		}
	}
	return stored, hasReady, err
}

// children returns the stored keys and whether ready exists, or
// client.ErrNoNode when the configuration node is missing. A child the
// publish may write or delete that is no configuration's (checkKeyNode,
// see touched) is an error matching recipes.ErrOtherRecipe, before
// anything is written.
func (p *publisher) children(ctx context.Context) (map[string]bool, bool, error) {
	var children []string
	err := p.retry(ctx, func(ctx context.Context) (err error) {
		children, _, err = p.c.Children(ctx, p.path)
		return err
	})
	if err == nil {
		err = p.retry(ctx, func(ctx context.Context) error { return checkKeys(ctx, p.c, p.path, p.touched(children)) })
	}
	stored := make(map[string]bool, len(children))
	hasReady := false
	for _, ch := range children {
		if ch == readyName {
			hasReady = true
		} else {
			stored[ch] = true
		}
	}
	return stored, hasReady, err
}

// touched returns the children a publish checks before it writes: all of
// them when there is no ready (a directory the publish cannot tell is a
// configuration yet), otherwise ready and the keys the publish writes or
// deletes. So a publish costs one look per key it touches, not per key
// stored, and still never writes or deletes another recipe's node.
func (p *publisher) touched(children []string) []string {
	if !slices.Contains(children, readyName) {
		return children
	}
	out := []string{readyName}
	for _, ch := range children {
		if _, ours := p.values[ch]; ch != readyName && (ours || p.replace) {
			out = append(out, ch)
		}
	}
	return out
}

// retry runs op until it succeeds or fails for good (client.Retry: it
// rides out lost connections and sessions within ctx). A write whose
// reply was lost (its outcome unknown) is tried again too, while ctx
// lives, because every write of a publish is idempotent: it stores the
// publish's own value, deletes a key or ready (a key or ready already
// gone is fine), or creates a node that may exist (and then sets it, or
// reads ready's zxid); an atomic publish that was applied fails its
// creates on the retry and is built again from a fresh listing. Applying
// any of them twice leaves what applying it once does.
func (p *publisher) retry(ctx context.Context, op func(context.Context) error) error {
	return p.c.Retry(ctx, func(ctx context.Context) error {
		err := op(ctx)
		var unknown *client.OutcomeUnknownError
		if errors.As(err, &unknown) && ctx.Err() == nil && client.IsTransient(unknown.Err) {
			return unknown.Err // the connection closed under the write: try again
		}
		return err
	})
}

// ignore turns the given error (errors.Is) into nil.
func ignore(err, target error) error {
	if errors.Is(err, target) {
		return nil
	}
	return err
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

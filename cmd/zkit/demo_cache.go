package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
)

// cacheReadYourWrites: a tree cache follows a configuration tree (one
// directory per writer, a few keys each) while every other worker rewrites,
// creates and deletes its keys. After each write the writer waits for the
// cache to reach the write's zxid, and the snapshot it gets must hold
// exactly that write. A reader of the cache's events ends on the tree a
// fresh read finds.
func cacheReadYourWrites(ctx context.Context, d *demoEnv) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers)
	if err != nil {
		return "", err
	}
	defer closeAll()
	root := d.path("cache")
	if err := cs[0].EnsurePath(ctx, root); err != nil {
		return "", err
	}
	tree, err := cache.OpenTree(ctx, cs[0], root)
	if err != nil {
		return "", err
	}
	defer tree.Close()
	var events atomic.Int64
	seen := map[string][]byte{}
	var mu sync.Mutex
	go func() {
		for ev := range tree.Events() {
			events.Add(1)
			mu.Lock()
			switch ev.Type {
			case cache.Created, cache.Changed:
				seen[ev.Path] = ev.Data
			case cache.Deleted:
				delete(seen, ev.Path)
			}
			mu.Unlock()
		}
	}()

	writers := cs[1:]
	errc := make(chan error, len(writers))
	for i, c := range writers {
		go func() { errc <- cacheWriter(ctx, d, c, tree, fmt.Sprintf("%s/w%d", root, i)) }()
	}
	var errs []error
	for range writers {
		errs = append(errs, <-errc)
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}

	// The cache ends equal to the tree, and so do its events.
	_, st, err := cs[1].Exists(ctx, root)
	if err != nil {
		return "", err
	}
	snap, err := tree.WaitFor(ctx, max(st.Pzxid, cs[1].LastZxid()))
	if err != nil {
		return "", err
	}
	fresh := map[string][]byte{}
	if err := readSubtree(ctx, cs[1], root, fresh); err != nil {
		return "", err
	}
	if err := sameNodes(snap, fresh); err != nil {
		return "", violationf("the cache at zxid %#x differs from the tree: %v", snap.Zxid(), err)
	}
	if err := waitFor(ctx, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return sameNodes(snap, seen) == nil
	}); err != nil {
		return "", violationf("the events did not add up to the tree")
	}
	return fmt.Sprintf("%d writes by %d writers, each read back from the cache at its zxid; %d events, ending on the tree's %d nodes",
		d.rounds*len(writers), len(writers), events.Load(), snap.Len()), nil
}

// cacheWriter writes under dir and reads each write back from the cache.
func cacheWriter(ctx context.Context, d *demoEnv, c *client.Client, tree *cache.Cache, dir string) error {
	if _, err := c.Create(ctx, dir, nil, client.Persistent); err != nil {
		return err
	}
	var last int64
	for r := range d.rounds {
		key := fmt.Sprintf("%s/key%d", dir, r%3)
		data := fmt.Appendf(nil, "%d", r)
		var zxid int64
		switch _, err := c.Create(ctx, key, data, client.Persistent); {
		case errors.Is(err, client.ErrNodeExists) && r%4 == 3:
			if err := c.Delete(ctx, key, -1); err != nil {
				return err
			}
			_, st, err := c.Exists(ctx, dir) // its pzxid is the delete's zxid
			if err != nil {
				return err
			}
			zxid, data = st.Pzxid, nil
		case errors.Is(err, client.ErrNodeExists):
			st, err := c.Set(ctx, key, data, -1)
			if err != nil {
				return err
			}
			zxid = st.Mzxid
		case err != nil:
			return err
		default:
			_, st, err := c.Exists(ctx, key)
			if err != nil {
				return err
			}
			zxid = st.Mzxid
		}
		d.count(1)
		snap, err := tree.WaitFor(ctx, zxid)
		if err != nil {
			return err
		}
		n, ok := snap.Get(key)
		switch {
		case snap.Zxid() < last:
			return violationf("the cache went back from zxid %#x to %#x", last, snap.Zxid())
		case data == nil && ok:
			return violationf("%s deleted at zxid %#x, still in the snapshot at %#x", key, zxid, snap.Zxid())
		case data != nil && (!ok || !bytes.Equal(n.Data, data)):
			return violationf("%s written at zxid %#x, not in the snapshot at %#x", key, zxid, snap.Zxid())
		}
		last = snap.Zxid()
	}
	return nil
}

// readSubtree reads every node's data under path.
func readSubtree(ctx context.Context, c *client.Client, path string, into map[string][]byte) error {
	data, _, err := c.Get(ctx, path)
	if err != nil {
		return err
	}
	into[path] = data
	kids, _, err := c.Children(ctx, path)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := readSubtree(ctx, c, client.JoinPath(path, k), into); err != nil {
			return err
		}
	}
	return nil
}

// sameNodes compares a snapshot's nodes with paths and data.
func sameNodes(s *cache.Snapshot, nodes map[string][]byte) error {
	if s.Len() != len(nodes) {
		return fmt.Errorf("%d nodes, want %d", s.Len(), len(nodes))
	}
	for p, data := range nodes {
		if n, ok := s.Get(p); !ok || !bytes.Equal(n.Data, data) {
			return fmt.Errorf("%s differs", p)
		}
	}
	return nil
}

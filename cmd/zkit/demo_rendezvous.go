package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkit-dev/zkit/rendezvous"
)

// rendezvousLaunch: the paper's rendezvous. A launcher creates zr, workers
// start waiting before the master has published, the master publishes its
// address: every worker gets it. Then the launcher ends: the master and
// every worker watching zr see it vanish.
func rendezvousLaunch(ctx context.Context, d *demoEnv) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers+2)
	if err != nil {
		return "", err
	}
	defer closeAll()
	launcher, master, workers := cs[0], cs[1], cs[2:]
	path := d.path("rendezvous/zr")
	if _, err := rendezvous.New(launcher, path).Create(ctx); err != nil {
		return "", err
	}
	d.count(1)
	const addr = "master.example:7000"
	got := make(chan error, len(workers))
	for _, c := range workers {
		go func() {
			data, err := rendezvous.New(c, path).Wait(ctx)
			switch {
			case err != nil:
				got <- err
			case string(data) != addr:
				got <- violationf("a worker got %q, not the master's address", data)
			default:
				d.count(1)
				got <- nil
			}
		}()
	}
	zr := rendezvous.New(master, path)
	if err := zr.Publish(ctx, []byte(addr)); err != nil {
		return "", err
	}
	d.count(1)
	for range workers {
		if err := <-got; err != nil {
			return "", err
		}
	}

	// Everyone watches zr; the launcher ends.
	gone := make(chan error, len(cs)-1)
	for _, c := range cs[1:] {
		feed := rendezvous.New(c, path).Watch(ctx)
		if v := <-feed.Values(); !v.Filled() {
			return "", violationf("zr is not filled after the master published")
		}
		go func() {
			for v := range feed.Values() {
				if !v.Exists {
					d.count(1)
					gone <- nil
					return
				}
			}
			gone <- feed.Err()
		}()
	}
	launcher.Close()
	for range cs[1:] {
		if err := <-gone; err != nil {
			return "", err
		}
	}
	if err := zr.Publish(ctx, []byte(addr)); !errors.Is(err, rendezvous.ErrGone) {
		return "", violationf("publishing after the launcher ended: %v, want ErrGone", err)
	}
	return fmt.Sprintf("%d workers waiting before the master got its address; launcher exit seen by master and all workers",
		len(workers)), nil
}

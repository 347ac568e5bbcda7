package rendezvous_test

import (
	"errors"
	"testing"

	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/rendezvous"
	"github.com/zkit-dev/zkit/zktest"
)

// A worker whose Wait found zr, and that was cut off while that launch
// ended and a new launcher created zr anew at the same path (filled by
// the new launch's master at once), gets ErrGone: zr was deleted after
// Wait found it, and the new zr is another rendezvous, not the master of
// the worker's launch.
func TestWaitSeesZrCreatedAnew(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := zrPath(t)
		first, err := rendezvous.New(b.Connect(t), path).Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		opts, cut, heal := b.Blackhole(t)
		worker := b.Connect(t, opts...)
		waited := waitAsync(ctx, worker, path)
		recipetest.WaitWatched(t, b, worker.Session(), path) // Wait read zr, empty
		// Replies come in order: once this one is in, so is that of the
		// read that set the watch.
		if _, _, err := worker.Exists(ctx, path); err != nil {
			t.Fatal(err)
		}
		cut()
		if err := first.Remove(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := rendezvous.New(b.Connect(t), path).Create(ctx); err != nil {
			t.Fatal(err)
		}
		if err := rendezvous.New(b.Connect(t), path).Publish(ctx, []byte("next-launch:1")); err != nil {
			t.Fatal(err)
		}
		heal()
		if r := receive(t, waited); !errors.Is(r.err, rendezvous.ErrGone) {
			t.Fatalf("Wait across a zr created anew = %q, %v; want ErrGone", r.data, r.err)
		}
	})
}

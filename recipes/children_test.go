package recipes_test

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// decoder decodes a child into "name=data", leaves out children whose data
// is "skip", and counts how often it decoded each child.
type decoder struct {
	mu    sync.Mutex
	calls map[string]int
}

func (d *decoder) decode(name string, data []byte, _ *client.Stat) *string {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls[name]++
	if string(data) == "skip" {
		return nil
	}
	v := name + "=" + string(data)
	return &v
}

func (d *decoder) counts() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.calls)
}

func create(t *testing.T, c *client.Client, path, data string) {
	t.Helper()
	if _, err := c.Create(t.Context(), path, []byte(data), client.Persistent); err != nil {
		t.Fatal(err)
	}
}

// ReadChildren returns the decoded children in name order, leaves out
// what decode leaves out, and reads a missing node as one without
// children.
func TestReadChildren(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		path := zktest.UniquePath(t)
		d := &decoder{calls: map[string]int{}}
		got, err := recipes.ReadChildren(t.Context(), c, path, d.decode)
		if err != nil || len(got) != 0 {
			t.Fatalf("missing node: %q, %v; want no children, no error", got, err)
		}
		if err := c.EnsurePath(t.Context(), path); err != nil {
			t.Fatal(err)
		}
		create(t, c, path+"/b", "2")
		create(t, c, path+"/c", "skip")
		create(t, c, path+"/a", "1")
		got, err = recipes.ReadChildren(t.Context(), c, path, d.decode)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"a=1", "b=2"}; !slices.Equal(got, want) {
			t.Fatalf("ReadChildren: %q, want %q", got, want)
		}
	})
}

// A ChildrenReader reads again only what changed: a new child costs one
// read, a written child one read, a deleted one none. While the node is
// missing it delivers no children and its watch fires when the node is
// created.
func TestChildrenReaderReadsOnlyWhatChanged(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		path := zktest.UniquePath(t)
		d := &decoder{calls: map[string]int{}}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		read := recipes.ChildrenReader(ctx, c, path, d.decode)

		// next reads until the value is want, waiting for the watch
		// between reads.
		var watch <-chan client.WatchEvent
		next := func(want ...string) {
			t.Helper()
			deadline := time.After(zktest.Scale(10 * time.Second))
			for {
				got, w, err := read(ctx)
				if err != nil {
					t.Fatal(err)
				}
				watch = w
				if slices.Equal(got, want) {
					return
				}
				select {
				case <-w:
				case <-deadline:
					t.Fatalf("children %q, want %q", got, want)
				}
			}
		}
		wait := func() {
			t.Helper()
			select {
			case <-watch:
			case <-time.After(zktest.Scale(10 * time.Second)):
				t.Fatal("the reader's watch did not fire")
			}
		}

		next()
		if err := c.EnsurePath(t.Context(), path); err != nil {
			t.Fatal(err)
		}
		wait()
		create(t, c, path+"/a", "1")
		create(t, c, path+"/b", "2")
		create(t, c, path+"/c", "skip")
		next("a=1", "b=2")
		if got, want := d.counts(), map[string]int{"a": 1, "b": 1, "c": 1}; !maps.Equal(got, want) {
			t.Fatalf("reads after the first listing: %v, want %v", got, want)
		}

		create(t, c, path+"/d", "4")
		wait()
		next("a=1", "b=2", "d=4")
		if _, err := c.Set(t.Context(), path+"/a", []byte("1b"), -1); err != nil {
			t.Fatal(err)
		}
		wait()
		next("a=1b", "b=2", "d=4")
		if err := c.Delete(t.Context(), path+"/b", -1); err != nil {
			t.Fatal(err)
		}
		wait()
		next("a=1b", "d=4")
		if got, want := d.counts(), map[string]int{"a": 2, "b": 1, "c": 1, "d": 1}; !maps.Equal(got, want) {
			t.Fatalf("reads: %v, want %v (only what changed read again)", got, want)
		}
	})
}

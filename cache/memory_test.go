package cache_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// A tree cache of 10 000 nodes (W7's tree of the benchmarks: 100
// directories of 99 leaves of 16 bytes) holds at most 256 bytes of live
// heap a node, what Curator's CuratorCache holds, with its events
// delivered too (and a change after them). It held about 500 when the image and the snapshots kept
// maps of their own.
//
// On real ZooKeeper alone: the bundled server runs in the test's process,
// and its buffers would count. Not parallel: it reads the process's live
// heap.
func TestMemoryPerNode(t *testing.T) {
	b := zktest.RealBackend(t)
	ctx := recipetest.Context(t)
	w, c := b.Connect(t), b.Connect(t)
	root := dir(t, w)
	for d := range 100 {
		p := fmt.Sprintf("%s/d%d", root, d)
		ops := []client.Op{client.CreateOp(p, nil, client.Persistent)}
		for l := range 99 {
			ops = append(ops, client.CreateOp(fmt.Sprintf("%s/l%d", p, l), make([]byte, 16), client.Persistent))
		}
		if _, err := w.Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
	}
	before := liveHeap()
	cc, err := cache.OpenTree(ctx, c, root)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	events := cc.Events()
	for ev := range events {
		if ev.Type == cache.Initialized {
			break
		}
	}
	// One change more: once its event is out, the delivery has let go of
	// the first snapshot's events.
	leaf := root + "/d0/l0"
	st, err := w.Set(ctx, leaf, make([]byte, 16), -1)
	if err != nil {
		t.Fatal(err)
	}
	for ev := range events {
		if ev.Path == leaf && ev.Stat.Version >= st.Version {
			break
		}
	}
	n := cc.Snapshot().Len()
	perNode := float64(liveHeap()-before) / float64(n)
	t.Logf("%d nodes, %.0f bytes a node", n, perNode)
	if n != 10_001 || perNode > 256 {
		t.Fatalf("%d nodes, %.0f bytes a node: want 10001 nodes and at most 256 bytes a node", n, perNode)
	}
}

// liveHeap is the live heap after a collection.
func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/zktest"
)

// membersLoad keeps a group churning: every worker but the last joins
// under one of a few ids, stays a moment and leaves, in a loop; the last
// worker watches the group. Once the load stops, every member still
// joined leaves; the group must then be empty (no member node left
// behind) and the watcher's last snapshot must be that empty group.
type membersLoad struct {
	path    string
	admin   *client.Client
	workers []*worker
	prog    *Progress

	latest    atomic.Pointer[[]membership.Entry] // the watcher's last snapshot
	stopWatch context.CancelFunc                 // ends the watch (Check calls it)
	watched   chan struct{}                      // closed when the watch has ended

	joins, leaves, failed atomic.Int64
}

func newMembersLoad(t *testing.T, admin *client.Client, workers []*worker, prog *Progress) *membersLoad {
	t.Helper()
	return &membersLoad{path: loadPath(t, admin, "membership", prog), admin: admin, workers: workers, prog: prog, watched: make(chan struct{})}
}

func (l *membersLoad) Name() string { return "membership" }

func (l *membersLoad) Workers() []*worker { return l.workers }

func (l *membersLoad) Run(ctx context.Context) {
	watcher := l.workers[len(l.workers)-1]
	// The watch outlives the load: Check ends it once it has seen the
	// last snapshot.
	wctx, stopWatch := context.WithCancel(context.Background())
	l.stopWatch = stopWatch
	go func() {
		defer close(l.watched)
		for g := range membership.New(watcher.c, l.path).Watch(wctx).Values() {
			l.latest.Store(&g)
		}
	}()
	var wg sync.WaitGroup
	for _, w := range l.workers[:len(l.workers)-1] {
		wg.Go(func() { l.churn(ctx, w) })
	}
	wg.Wait()
}

// churn joins, stays a moment and leaves, under ids of its own. Leave
// runs on a context of its own, so that stopping the load never cuts one
// short; a Leave that fails goes on deleting the node in the background.
func (l *membersLoad) churn(ctx context.Context, w *worker) {
	var b client.Backoff
	g := membership.New(w.c, l.path)
	for i := 0; ctx.Err() == nil; i++ {
		id := fmt.Sprintf("worker-%d-%d", w.id, i%3)
		m, err := g.Join(ctx, id, []byte(id))
		if err != nil {
			l.failed.Add(1)
			b.Wait(ctx)
			continue
		}
		l.joins.Add(1)
		time.Sleep(5 * time.Millisecond)
		lctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(10*time.Second))
		err = m.Leave(lctx)
		cancel()
		if err != nil {
			l.failed.Add(1)
			b.Wait(ctx)
			continue
		}
		l.leaves.Add(1)
		b.Reset()
		l.prog.Done("membership")
	}
}

func (l *membersLoad) Check(t *testing.T) (ops, violations int, held string) {
	t.Helper()
	defer func() { l.stopWatch(); <-l.watched }()
	// Every member has left (or is being deleted in the background after
	// a failed Leave): the group must become empty, and the watcher's last
	// snapshot with it.
	ctx := testContext(t, 30*time.Second)
	deadline := time.Now().Add(zktest.Scale(30 * time.Second))
	var group []membership.Entry
	for {
		var err error
		if err = l.admin.Sync(ctx, l.path); err == nil {
			group, err = membership.New(l.admin, l.path).List(ctx)
		}
		if err != nil {
			t.Fatalf("membership: %v", err)
		}
		g := l.latest.Load()
		if len(group) == 0 && g != nil && len(*g) == 0 {
			break
		}
		if time.Now().After(deadline) {
			var last []string
			if g != nil {
				last = ids(*g)
			}
			t.Errorf("membership: members left behind after every member left: [%s]; the watcher's last snapshot: [%s]",
				strings.Join(ids(group), " "), strings.Join(last, " "))
			violations++
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	held = fmt.Sprintf("membership: %d joins, %d leaves, %d failed attempts; no member node left, the watcher ended on the final group",
		l.joins.Load(), l.leaves.Load(), l.failed.Load())
	return int(l.joins.Load() + l.leaves.Load()), violations, held
}

func ids(group []membership.Entry) []string {
	var out []string
	for _, e := range group {
		out = append(out, e.ID)
	}
	return out
}

package election_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Requeue hands over to the next candidate and rejoins behind it in one
// transaction: no delete of its own, and whoever sees the old node go sees
// the new one already there. The next term comes in queue order with a
// higher token.
func TestRequeue(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		reader := sdkmetric.NewManualReader()
		a := election.New(b.Connect(t, client.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))), path, "a")
		var led ledger
		first, err := a.Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		led.begin(first)
		pb := campaign(ctx, election.New(b.Connect(t), path, "b"))
		recipetest.WaitChildren(t, admin, path, 2)
		_, _, gone, err := admin.ExistsW(ctx, first.Node())
		if err != nil {
			t.Fatal(err)
		}
		before := recipetest.Requests(t, reader)

		requeued := make(chan *election.Term, 1)
		go func() {
			term, err := first.Requeue(ctx)
			if err != nil {
				t.Error(err)
			}
			requeued <- term
		}()
		<-gone
		names := recipetest.Children(t, admin, path)
		if len(names) != 2 || slices.Contains(names, nodeName(first.Node())) {
			t.Fatalf("right after the old node went: %v, want b's node and a's new one", names)
		}
		if !errors.Is(first.Err(), recipes.ErrReleased) {
			t.Fatalf("the requeued term ended with %v, want ErrReleased", first.Err())
		}
		tb := elected(t, pb)
		led.begin(tb)
		after := recipetest.Requests(t, reader)
		if d := after["delete ok"] - before["delete ok"]; d != 0 {
			t.Errorf("Requeue sent %d deletes, want none (the delete goes with the create)", d)
		}
		select {
		case term := <-requeued:
			t.Fatalf("a leads again (%v) while b does", term)
		default:
		}
		if err := tb.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		second := <-requeued
		if second == nil {
			t.FailNow()
		}
		led.begin(second)
		led.check(t)
		if second.ID() != "a" {
			t.Errorf("the requeued term is %q's", second.ID())
		}

		// A term lost before Requeue: Requeue campaigns anew.
		if err := admin.Delete(ctx, second.Node(), -1); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, second.Done(), "the term's end after its node was deleted")
		third, err := second.Requeue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(second.Err(), election.ErrLost) {
			t.Errorf("the lost term's Err = %v, want ErrLost", second.Err())
		}
		led.begin(third)
		led.check(t)

		// Cancelled: the term ends and nothing of a's is left.
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := third.Requeue(cancelled); !errors.Is(err, context.Canceled) {
			t.Errorf("Requeue with a cancelled context = %v", err)
		}
		if !errors.Is(third.Err(), recipes.ErrReleased) {
			t.Errorf("the term ended with %v, want ErrReleased", third.Err())
		}
		recipetest.Eventually(t, "a's node removed", func() bool {
			return len(recipetest.Children(t, admin, path)) == 0
		})
	})
}

// A Requeue whose transaction's reply is lost finds its new node by the
// protected name: the old node is gone, the new one is the only one, and
// the next term has a higher token.
func TestRequeueLostReply(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		proxy := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(proxy.Dialer()))
		sub := c.Subscribe()
		defer sub.Close()
		first, err := election.New(c, path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		proxy.CutAfterNextMultiCreate(path + "/")
		next, err := first.Requeue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !recipetest.WaitEventFor(t, sub, zktest.Scale(5*time.Second), func(ev client.Event) bool { return ev.State == client.StateSuspended }) {
			t.Fatal("the transaction's reply was not cut")
		}
		onlyNode(t, admin, path, next, "after the lost reply")
		if next.Token() <= first.Token() {
			t.Errorf("token %d after %d", next.Token(), first.Token())
		}
		if err := next.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

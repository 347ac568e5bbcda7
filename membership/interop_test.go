package membership_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/zktest"
)

// curatorSees asks the Curator member id for its view of the group until
// it is want.
func curatorSees(t *testing.T, java *recipetest.CuratorPeer, id, want string) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(30 * time.Second))
	for {
		java.Send("%s members", id)
		got := strings.TrimPrefix(strings.TrimPrefix(java.Next(), id+" members"), " ")
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Curator's GroupMember %s sees %q, want %q", id, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Curator's GroupMember and zkit's membership see the same group, both
// ways; a Curator member claiming a zkit member's id is a conflict that
// zkit reports and resolves by leaving the id to it.
func TestCuratorInterop(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := groupPath(t, admin)
		java := recipetest.StartGroupMember(t, b.Servers)
		feed := membership.New(b.Connect(t), path).Watch(ctx)

		goMember, err := membership.New(b.Connect(t), path).Join(ctx, "go-1", []byte("g1"))
		if err != nil {
			t.Fatal(err)
		}
		java.Send("j1 join %s java-1 j1", path)
		java.Expect("j1 joined")
		curatorSees(t, java, "j1", "go-1=g1,java-1=j1")
		awaitSnapshot(t, feed, show, "go-1=g1,java-1=j1")

		// Data changes travel both ways.
		java.Send("j1 set j2")
		java.Expect("j1 set")
		awaitSnapshot(t, feed, show, "go-1=g1,java-1=j2")
		if err := goMember.Update(ctx, []byte("g2")); err != nil {
			t.Fatal(err)
		}
		curatorSees(t, java, "j1", "go-1=g2,java-1=j2")

		// zkit does not take an id a Curator member holds.
		if _, err := membership.New(b.Connect(t), path).Join(ctx, "java-1", []byte("x")); !errors.Is(err, membership.ErrConflict) {
			t.Fatalf("zkit Join of Curator's id = %v, want ErrConflict", err)
		}
		awaitSnapshot(t, feed, show, "go-1=g2,java-1=j2")

		// Curator takes over a node that exists (it overwrites its data):
		// zkit sees the conflict, gives the id up, and Curator keeps it.
		java.Send("j2 join %s go-1 taken", path)
		java.Expect("j2 joined")
		recipetest.Within(t, goMember.Done(), "the zkit member's Done after Curator claimed its id")
		if !errors.Is(goMember.Err(), membership.ErrConflict) {
			t.Fatalf("zkit member ended with %v, want ErrConflict", goMember.Err())
		}
		awaitSnapshot(t, feed, show, "go-1=taken,java-1=j2")
		curatorSees(t, java, "j1", "go-1=taken,java-1=j2")

		java.Send("j1 leave")
		java.Expect("j1 left")
		java.Send("j2 leave")
		java.Expect("j2 left")
		awaitSnapshot(t, feed, show, "")
	})
}

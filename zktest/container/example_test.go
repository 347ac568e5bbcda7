package container_test

import (
	"context"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest"
	"github.com/zkit-dev/zkit/zktest/container"
)

func ExampleRunEnsemble() {
	testWithDocker := func(t *testing.T) {
		zk := container.RunEnsemble(t, 3) // skipped without Docker; terminated in t.Cleanup
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(10*time.Second))
		defer cancel()
		for _, addr := range zk.Servers() {
			if err := zktest.Probe(ctx, addr); err != nil {
				t.Fatal(err)
			}
		}
		// connect your client to zk.Servers() ...

		// ... and fail over, as with zktest.StartEnsemble.
		leader, err := zk.Leader()
		if err != nil {
			t.Fatal(err)
		}
		zk.Kill(leader)    // SIGKILL: a crash
		zk.Restart(leader) // same data, same address; back once it serves
	}
	exampleBody = testWithDocker
}

// exampleBody is the test body ExampleRunEnsemble shows, run by
// TestExampleRunEnsemble: an Example without output only compiles.
var exampleBody func(t *testing.T)

func TestExampleRunEnsemble(t *testing.T) {
	exampleBody = nil
	ExampleRunEnsemble()
	if exampleBody == nil {
		t.Fatal("ExampleRunEnsemble handed no test body to run")
	}
	exampleBody(t) // skipped without Docker
}

package container

import (
	"context"
	"fmt"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/zkit-dev/zkit/zktest"
)

// Kill sends SIGKILL to node i's server (docker kill) and waits until its
// container has stopped: a crash, with no goodbye to clients or peers.
// Killing a node that is not running does nothing. The container, its data
// and its published port stay, for Restart.
//
// Like zktest.ZooKeeper.Kill it cannot return an error: it fails the test
// that started the servers (Run, RunEnsemble), or panics for servers
// started with Start or StartEnsemble.
func (z *ZooKeeper) Kill(i int) {
	if err := z.kill(i); err != nil {
		z.fatalf("zktest/container: Kill(%d): %v", i, err)
	}
}

func (z *ZooKeeper) kill(i int) error {
	ctr, err := z.container(i)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(30*time.Second))
	defer cancel()
	if running, err := isRunning(ctx, ctr); err != nil || !running {
		return err
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.ContainerKill(ctx, ctr.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return err
	}
	for {
		running, err := isRunning(ctx, ctr)
		if err != nil || !running {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("still running: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Restart starts node i again with the same data on the same published
// port, and waits until it serves clients again (for an ensemble member:
// until it has rejoined the quorum). A running node is stopped first
// (SIGTERM, then SIGKILL after Docker's grace period). Failures are
// reported as for Kill.
func (z *ZooKeeper) Restart(i int) {
	if err := z.restart(i); err != nil {
		z.fatalf("zktest/container: Restart(%d): %v", i, err)
	}
}

func (z *ZooKeeper) restart(i int) error {
	ctr, err := z.container(i)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(z.startTimeout))
	defer cancel()
	if running, err := isRunning(ctx, ctr); err != nil {
		return err
	} else if running {
		if err := ctr.Stop(ctx, nil); err != nil {
			return err
		}
	}
	if err := ctr.Start(ctx); err != nil {
		return err
	}
	return waitServing(ctx, z.Servers()[i])
}

// Leader returns the index of the node that is the leader (for a
// standalone server, 0), asking every node with the "srvr" four-letter
// word (zktest.LeaderOf). While there is none, during an election for
// example, the error wraps zktest.ErrNoLeader.
func (z *ZooKeeper) Leader() (int, error) { return zktest.LeaderOf(z.Servers()) }

// Mode returns node i's "Mode:" from the srvr four-letter word: "leader",
// "follower", "observer" or "standalone". A node that is not serving (for
// example during an election, or killed) gives an error, and so does an
// index out of range.
func (z *ZooKeeper) Mode(i int) (string, error) {
	servers := z.Servers()
	if i < 0 || i >= len(servers) {
		return "", fmt.Errorf("zktest/container: Mode(%d): no node %d (%d nodes)", i, i, len(servers))
	}
	return zktest.ServerMode(servers[i])
}

// container returns node i's container.
func (z *ZooKeeper) container(i int) (testcontainers.Container, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if i < 0 || i >= len(z.containers) {
		return nil, fmt.Errorf("no node %d (%d running containers)", i, len(z.containers))
	}
	return z.containers[i], nil
}

func isRunning(ctx context.Context, ctr testcontainers.Container) (bool, error) {
	st, err := ctr.State(ctx)
	if err != nil {
		return false, err
	}
	return st.Running, nil
}

// fatalf fails the test that started the servers, or panics.
func (z *ZooKeeper) fatalf(format string, args ...any) {
	if z.tb != nil {
		z.tb.Helper()
		z.tb.Fatalf(format, args...)
	}
	panic(fmt.Sprintf(format, args...))
}

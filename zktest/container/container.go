// Package container runs Apache ZooKeeper in Docker for tests, through
// testcontainers-go: a standalone server or an n-node ensemble from the
// official "zookeeper" image.
//
// It is a module of its own (github.com/zkit-dev/zkit/zktest/container) so
// that importing zkit or zktest does not pull a Docker client into anyone's
// build. Without Docker, Run and RunEnsemble skip the test
// (testcontainers.SkipIfProviderIsNotHealthy).
//
// The servers are configured like zktest's local ones: tickTime=200,
// minSessionTimeout=400 and maxSessionTimeout=60000 (short session timeouts
// work), every four-letter word allowed, no admin server. Each node's client
// port is published on 127.0.0.1 only, on a port chosen when it is created
// and kept across Kill and Restart, which mean what they mean for zktest's
// local servers; Leader and Mode ask the nodes, as zktest's do.
//
// Not yet run against a Docker engine: zkit's CI builds and vets this
// package, but the machine it was written on has none, so the tests that
// start containers (TestStandalone, TestEnsembleFailover) have only ever
// skipped. What is checked without Docker is the request it makes (ports,
// environment). Port publishing assumes the engine runs on this host (a
// local socket, or Docker Desktop's forwarding); with a remote DOCKER_HOST
// the published 127.0.0.1 ports are not reachable.
package container

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	docker "github.com/moby/moby/api/types/container"
	dockernet "github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/zkit-dev/zkit/zktest"
)

// DefaultImage is the image Start and StartEnsemble run unless WithImage
// says otherwise.
const DefaultImage = "zookeeper:3.8"

const clientPort = "2181/tcp"

// ZooKeeper is a standalone server or an ensemble running in containers.
// Its methods are safe for concurrent use.
type ZooKeeper struct {
	tb           testing.TB // the test that started it (Run, RunEnsemble), or nil
	startTimeout time.Duration

	mu         sync.Mutex
	containers []testcontainers.Container
	network    *testcontainers.DockerNetwork
	servers    []string
}

// Option configures Start, StartEnsemble, Run and RunEnsemble.
type Option func(*config)

type config struct {
	image        string
	env          map[string]string
	startTimeout time.Duration
}

// WithImage runs image instead of DefaultImage; it must be an official
// zookeeper image or one configured the same way (ZOO_* variables).
func WithImage(image string) Option { return func(c *config) { c.image = image } }

// WithEnv sets an environment variable on every node, replacing the default
// for that name (for example WithEnv("ZOO_TICK_TIME", "2000"), or
// ZOO_CFG_EXTRA for any other zoo.cfg line).
func WithEnv(name, value string) Option { return func(c *config) { c.env[name] = value } }

// WithStartTimeout bounds how long starting waits for the servers to serve
// (default 2 minutes, which includes pulling the image). It is passed
// through zktest.Scale.
func WithStartTimeout(d time.Duration) Option { return func(c *config) { c.startTimeout = d } }

func newConfig(opts []Option) config {
	c := config{image: DefaultImage, env: map[string]string{}, startTimeout: 2 * time.Minute}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// nodeEnv is the environment of node id (1-based) of an n-node ensemble.
func nodeEnv(c config, id, n int) map[string]string {
	env := map[string]string{
		"ZOO_TICK_TIME":              "200",
		"ZOO_INIT_LIMIT":             "50",
		"ZOO_SYNC_LIMIT":             "25",
		"ZOO_MAX_CLIENT_CNXNS":       "0",
		"ZOO_ADMINSERVER_ENABLED":    "false",
		"ZOO_4LW_COMMANDS_WHITELIST": "*",
		"ZOO_CFG_EXTRA":              "minSessionTimeout=400 maxSessionTimeout=60000",
	}
	if n > 1 {
		env["ZOO_MY_ID"] = strconv.Itoa(id)
		env["ZOO_SERVERS"] = zooServers(n)
		env["ZOO_STANDALONE_ENABLED"] = "false"
	}
	maps.Copy(env, c.env)
	return env
}

// zooServers is ZOO_SERVERS for an n-node ensemble whose node i has the
// network alias zk<i>.
func zooServers(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("server.%d=%s:2888:3888;2181", i+1, alias(i+1))
	}
	return strings.Join(s, " ")
}

func alias(id int) string { return "zk" + strconv.Itoa(id) }

// Start starts a standalone ZooKeeper container and returns once it serves
// clients. The caller must Terminate it.
func Start(ctx context.Context, opts ...Option) (*ZooKeeper, error) {
	return StartEnsemble(ctx, 1, opts...)
}

// StartEnsemble starts n ZooKeeper containers on a network of their own (a
// standalone server if n is 1) and returns once every node serves clients.
// The caller must Terminate it; on error nothing is left running.
func StartEnsemble(ctx context.Context, n int, opts ...Option) (z *ZooKeeper, err error) {
	if n < 1 {
		return nil, fmt.Errorf("zktest/container: need at least 1 node, got %d", n)
	}
	c := newConfig(opts)
	ctx, cancel := context.WithTimeout(ctx, zktest.Scale(c.startTimeout))
	defer cancel()
	z = &ZooKeeper{startTimeout: c.startTimeout}
	defer func() {
		if err != nil {
			err = errors.Join(err, z.Terminate(context.WithoutCancel(ctx)))
			z = nil
		}
	}()
	if n > 1 {
		nw, err := network.New(ctx)
		if err != nil {
			return z, fmt.Errorf("zktest/container: creating a network: %w", err)
		}
		z.network = nw
	}
	for id := 1; id <= n; id++ {
		ctr, addr, err := startNode(ctx, c, id, n, z.network)
		if ctr != nil {
			z.containers = append(z.containers, ctr)
		}
		if err != nil {
			return z, fmt.Errorf("zktest/container: starting node %d from %s: %w", id, c.image, err)
		}
		z.servers = append(z.servers, addr)
	}
	// Followers serve only once a quorum has formed.
	for i, addr := range z.servers {
		if err := waitServing(ctx, addr); err != nil {
			return z, fmt.Errorf("zktest/container: node %d (%s) does not serve: %w", i+1, addr, err)
		}
	}
	return z, nil
}

// startNode creates and starts node id of an n-node ensemble, its client
// port published on a free port of 127.0.0.1, and returns the address
// clients use. Another process may take the port between the check and
// Docker's bind: then it tries again with another.
func startNode(ctx context.Context, c config, id, n int, nw *testcontainers.DockerNetwork) (testcontainers.Container, string, error) {
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, "", err
		}
		ctr, err := testcontainers.Run(ctx, c.image, nodeCustomizers(c, id, n, port, nw)...)
		if err != nil && attempt < 3 && strings.Contains(err.Error(), "already") { // "port is already allocated", "address already in use"
			if ctr != nil {
				ctr.Terminate(context.WithoutCancel(ctx))
			}
			continue
		}
		if err != nil {
			return ctr, "", err
		}
		addr, err := ctr.PortEndpoint(ctx, clientPort, "")
		if err != nil {
			return ctr, "", fmt.Errorf("its client port: %w", err)
		}
		return ctr, addr, nil
	}
}

// nodeCustomizers configures node id of an n-node ensemble whose client
// port is published on 127.0.0.1:port.
func nodeCustomizers(c config, id, n, port int, nw *testcontainers.DockerNetwork) []testcontainers.ContainerCustomizer {
	custom := []testcontainers.ContainerCustomizer{
		testcontainers.WithExposedPorts(clientPort),
		testcontainers.WithHostConfigModifier(func(hc *docker.HostConfig) {
			hc.PortBindings = dockernet.PortMap{dockernet.MustParsePort(clientPort): {{
				HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(port)}}}
		}),
		testcontainers.WithEnv(nodeEnv(c, id, n)),
		testcontainers.WithWaitStrategy(wait.ForListeningPort(clientPort)),
	}
	if nw != nil {
		custom = append(custom, network.WithNetwork([]string{alias(id)}, nw))
	}
	return custom
}

// freePort returns a port of 127.0.0.1 that nobody listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("zktest/container: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitServing(ctx context.Context, addr string) error {
	for {
		pctx, cancel := context.WithTimeout(ctx, zktest.Scale(5*time.Second))
		err := zktest.Probe(pctx, addr)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last probe: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Run starts a standalone ZooKeeper container for the test and terminates
// it in t.Cleanup. Without a working Docker provider the test is skipped.
func Run(t testing.TB, opts ...Option) *ZooKeeper {
	t.Helper()
	return RunEnsemble(t, 1, opts...)
}

// RunEnsemble starts an n-node ensemble for the test (see StartEnsemble) and
// terminates it in t.Cleanup. Without a working Docker provider the test is
// skipped.
func RunEnsemble(t testing.TB, n int, opts ...Option) *ZooKeeper {
	t.Helper()
	skipWithoutDocker(t)
	z, err := StartEnsemble(context.Background(), n, opts...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	z.tb = t
	t.Cleanup(func() {
		if err := z.Terminate(context.Background()); err != nil {
			t.Errorf("zktest/container: %v", err)
		}
	})
	return z
}

// skipWithoutDocker skips the test unless a Docker provider answers.
func skipWithoutDocker(tb testing.TB) {
	tb.Helper()
	if t, ok := tb.(*testing.T); ok {
		testcontainers.SkipIfProviderIsNotHealthy(t)
		return
	}
	// The same check for benchmarks and fuzz targets.
	defer func() {
		if r := recover(); r != nil {
			tb.Skipf("Docker is not running: %v", r)
		}
	}()
	p, err := testcontainers.ProviderDocker.GetProvider()
	if err == nil {
		err = p.Health(context.Background())
	}
	if err != nil {
		tb.Skipf("Docker is not running: %v", err)
	}
}

// Servers returns each node's client address as reachable from the host
// ("host:published port"), in node order. They do not change when a node
// is restarted.
func (z *ZooKeeper) Servers() []string {
	z.mu.Lock()
	defer z.mu.Unlock()
	return slices.Clone(z.servers)
}

// ConnectString returns Servers joined with commas.
func (z *ZooKeeper) ConnectString() string { return strings.Join(z.Servers(), ",") }

// Containers returns the nodes' containers, in node order, for what this
// package does not wrap (logs, exec).
func (z *ZooKeeper) Containers() []testcontainers.Container {
	z.mu.Lock()
	defer z.mu.Unlock()
	return slices.Clone(z.containers)
}

// Terminate removes every container and the ensemble's network. It may be
// called more than once.
func (z *ZooKeeper) Terminate(ctx context.Context) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	var errs []error
	for _, c := range z.containers {
		if err := c.Terminate(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	z.containers = nil
	if z.network != nil {
		if err := z.network.Remove(ctx); err != nil {
			errs = append(errs, err)
		}
		z.network = nil
	}
	return errors.Join(errs...)
}

package zktest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ErrNoLeader is returned by Leader when no running node reports itself as
// leader (or standalone).
var ErrNoLeader = errors.New("zktest: no ZooKeeper leader")

// ZooKeeper is a running standalone server or ensemble of real Apache
// ZooKeeper, started by StartZooKeeper, StartEnsemble or SharedZooKeeper.
//
// Every node listens on 127.0.0.1 only, on free ports, with its own data
// directory. zktest starts each node as its own process (a new session, so
// that signals from the terminal do not reach it) and stops it by PID; on
// Linux the JVM is also killed if the test binary dies.
//
// The servers run with tickTime=200, minSessionTimeout=400 and
// maxSessionTimeout=60000, so tests can use short session timeouts, and with
// forceSync=no (data survives a killed JVM, not a power cut). Options
// override any zoo.cfg setting. An ensemble's members retry their election
// connections at least every 2 s instead of every minute (the system
// property zookeeper.fastleader.maxNotificationInterval, which WithJVMArgs
// may override), so that a member that lost touch with a quorum which
// carried on without it rejoins within seconds once it can reach it again
// (after a Heal, say).
//
// The methods are safe for concurrent use. Methods that cannot return an
// error (Kill, Restart, Partition, Isolate, PID, LogFile) fail the test that
// started the servers; on the shared server they panic. Mode returns its
// errors, a node index out of range included.
type ZooKeeper struct {
	tb     testing.TB // nil for the shared server
	inst   *Install
	cfg    config
	dir    string
	shared bool

	peers *peerNet    // links between members (partition.go); nil if standalone or peerLinksUnsupported
	ports *portClaims // the nodes' ports, claimed until stop

	mu      sync.Mutex
	nodes   []*node
	stopped bool
}

type node struct {
	index                            int
	clientPort, quorumPort, elecPort int
	securePort                       int    // 0 without WithTLS
	adminPort                        int    // 0 without WithAdminServer
	dir                              string // zoo.cfg, data/, server.log
	proc                             *process
	restarting                       sync.Mutex // held by restart: one at a time
}

type process struct {
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed once the process has been reaped
	err  error         // the Wait error, valid after done
}

func (p *process) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Option configures StartZooKeeper, StartEnsemble and SharedZooKeeper.
type Option func(*config)

type config struct {
	install      *Install
	settings     map[string]string
	heap         string
	jvmArgs      []string
	startTimeout time.Duration
	tlsCA        *CA
	admin        bool
	reconfig     bool // WithReconfig: the server lines in a dynamic configuration file (reconfig.go)
}

func newConfig(opts []Option) config {
	c := config{heap: "256m", startTimeout: 60 * time.Second, settings: map[string]string{}}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// installOrSkip is the install to run: WithInstall's, else the one
// InstallOrSkip finds. Either way the test is skipped when ReferenceOnlyEnv
// rules real ZooKeeper out.
func (c config) installOrSkip(t testing.TB) *Install {
	t.Helper()
	if c.install == nil {
		return InstallOrSkip(t)
	}
	skipIfReferenceOnly(t)
	return c.install
}

// WithInstall runs the given install instead of the one FindZooKeeper finds.
func WithInstall(inst *Install) Option { return func(c *config) { c.install = inst } }

// WithConfig sets a zoo.cfg setting on every node, replacing zktest's default
// for key if it has one (for example WithConfig("tickTime", "2000")). The
// listen addresses, ports, dataDir and server.N lines are zktest's to choose.
func WithConfig(key, value string) Option {
	return func(c *config) { c.settings[key] = value }
}

// WithHeap sets the JVM's maximum heap (-Xmx), "256m" by default.
func WithHeap(size string) Option { return func(c *config) { c.heap = size } }

// WithJVMArgs adds arguments to the java command line, before the main class.
func WithJVMArgs(args ...string) Option {
	return func(c *config) { c.jvmArgs = append(c.jvmArgs, args...) }
}

// WithContainerCheckInterval makes the servers look for empty containers
// (and expired TTL nodes) to delete every d instead of every minute: the
// system property znode.container.checkIntervalMs. The reference server's
// equivalent is ServerContainerCheckInterval.
func WithContainerCheckInterval(d time.Duration) Option {
	return WithJVMArgs(fmt.Sprintf("-Dznode.container.checkIntervalMs=%d", max(d.Milliseconds(), 1)))
}

// WithTLS gives every node a TLS client port (secureClientPort, listed by
// SecureServers) besides its plain one, with a server certificate issued by
// ca for 127.0.0.1 and localhost. Clients that present a certificate signed
// by ca (ca.ClientCert) are authenticated by ZooKeeper's x509 provider as
// its subject; clients without one are accepted too (ssl.clientAuth=want;
// WithConfig("ssl.clientAuth", "need") requires one).
//
// It sets these zoo.cfg settings, which WithConfig may override:
// serverCnxnFactory (Netty, which TLS needs), ssl.keyStore.location and
// ssl.trustStore.location (PEM files that zktest writes in the node's
// directory) with their types, ssl.clientAuth, and authProvider.x509.
func WithTLS(ca *CA) Option {
	return func(c *config) { c.tlsCA = ca }
}

// WithAdminServer turns on every node's admin server (ZooKeeper's HTTP
// interface to its commands, admin.enableServer, which zktest's zoo.cfg
// turns off otherwise) on a port of its own on 127.0.0.1, listed by
// AdminServers. Debian's ZooKeeper needs Jetty, the servlet API and
// Jackson in /usr/share/java for it (the packages libjetty9-java,
// libservlet-api-java and libjackson2-databind-java); without them the
// node serves clients but not HTTP. It sets admin.enableServer,
// admin.serverAddress and admin.serverPort.
func WithAdminServer() Option {
	return func(c *config) {
		c.admin = true
		c.settings["admin.enableServer"] = "true"
	}
}

// WithStartTimeout bounds how long starting (or restarting) waits for the
// servers to serve; the default is 60 s. It is passed through Scale.
func WithStartTimeout(d time.Duration) Option { return func(c *config) { c.startTimeout = d } }

// StartZooKeeper starts a standalone ZooKeeper server for the test and
// returns once it serves clients (a session can be opened). It is stopped in
// t.Cleanup; its data lives in t.TempDir. Without a ZooKeeper install the
// test is skipped (failed with ZKIT_REQUIRE_ZOOKEEPER=1).
//
// A JVM takes a second or two to start; tests that need no faults of their
// own should use SharedZooKeeper.
func StartZooKeeper(t testing.TB, opts ...Option) *ZooKeeper {
	t.Helper()
	return startT(t, 1, opts)
}

// StartEnsemble starts an ensemble of n ZooKeeper servers (a standalone
// server if n is 1) and returns once every node serves clients and a leader
// has been elected. Node i is Servers()[i]. Cleanup and skipping work as in
// StartZooKeeper.
//
// Each node is a JVM: a 3-node ensemble on a small machine takes several
// seconds to start, so start one per test binary where you can.
func StartEnsemble(t testing.TB, n int, opts ...Option) *ZooKeeper {
	t.Helper()
	if n < 1 {
		t.Fatalf("zktest: StartEnsemble: need at least 1 node, got %d", n)
	}
	return startT(t, n, opts)
}

func startT(t testing.TB, n int, opts []Option) *ZooKeeper {
	t.Helper()
	cfg := newConfig(opts)
	inst := cfg.installOrSkip(t)
	z, err := start(inst, t.TempDir(), n, cfg)
	if err != nil {
		t.Fatalf("%v", err)
	}
	z.tb = t
	t.Cleanup(func() {
		if t.Failed() {
			z.logTails(t)
		}
		z.Stop()
	})
	return z
}

// start launches n nodes in dir and waits for them; on failure it stops
// whatever it started.
func start(inst *Install, dir string, n int, cfg config) (*ZooKeeper, error) {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var z *ZooKeeper
		z, err = startOnce(inst, filepath.Join(dir, fmt.Sprintf("zk%d", attempt)), n, cfg)
		if err == nil {
			return z, nil
		}
		if !errors.Is(err, errPortTaken) {
			break
		}
		// Another process took one of the free ports between our check
		// and the JVM's bind: try again with fresh ones.
	}
	return nil, err
}

var errPortTaken = errors.New("port already in use")

// maxNotificationInterval caps the election backoff of ensemble members.
const maxNotificationInterval = 2 * time.Second

func startOnce(inst *Install, dir string, n int, cfg config) (*ZooKeeper, error) {
	perNode := 3
	if cfg.tlsCA != nil {
		perNode++
	}
	if cfg.admin {
		perNode++
	}
	z := &ZooKeeper{inst: inst, cfg: cfg, dir: dir}
	if n > 1 && cfg.peerLinksUnsupported() == "" {
		// Listening first keeps freePorts from handing out a link's port.
		peers, err := newPeerNet(n)
		if err != nil {
			return nil, err
		}
		z.peers = peers
	}
	claims, err := claimFreePorts(perNode * n)
	if err != nil {
		z.Stop()
		return nil, err
	}
	z.ports = claims
	ports := claims.ports
	for i := 0; i < n; i++ {
		p := ports[perNode*i:]
		nd := &node{index: i, clientPort: p[0], quorumPort: p[1], elecPort: p[2],
			dir: filepath.Join(dir, fmt.Sprintf("node%d", i))}
		extra := p[3:perNode]
		if cfg.tlsCA != nil {
			nd.securePort, extra = extra[0], extra[1:]
		}
		if cfg.admin {
			nd.adminPort = extra[0]
		}
		z.nodes = append(z.nodes, nd)
	}
	if z.peers != nil {
		z.peers.start(z.nodes)
	}
	for _, nd := range z.nodes {
		if err := z.writeConfig(nd, z.initialMembers()); err != nil {
			z.Stop()
			return nil, err
		}
	}
	for _, nd := range z.nodes {
		if err := z.launch(nd); err != nil {
			z.Stop()
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), Scale(cfg.startTimeout))
	defer cancel()
	if err := z.waitReady(ctx); err != nil {
		taken := false
		for _, nd := range z.nodes {
			if strings.Contains(tail(filepath.Join(nd.dir, "server.log"), 200), "Address already in use") {
				taken = true
			}
		}
		z.Stop()
		if taken {
			return nil, fmt.Errorf("%w: %v", errPortTaken, err)
		}
		return nil, err
	}
	return z, nil
}

// defaultSettings are zktest's zoo.cfg defaults, in file order.
var defaultSettings = [][2]string{
	{"tickTime", "200"},
	{"initLimit", "50"},
	{"syncLimit", "25"},
	{"minSessionTimeout", "400"},
	{"maxSessionTimeout", "60000"},
	{"maxClientCnxns", "0"},
	{"admin.enableServer", "false"},
	{"4lw.commands.whitelist", "*"},
	{"forceSync", "no"},
}

// reservedSettings are chosen by zktest and cannot be overridden.
var reservedSettings = map[string]bool{
	"dataDir": true, "dataLogDir": true, "clientPort": true, "clientPortAddress": true,
	"quorumListenOnAllIPs": true, "secureClientPort": true, "secureClientPortAddress": true,
}

// writeConfig writes nd's zoo.cfg. members are the server lines of a
// dynamic configuration file (WithReconfig); without it zoo.cfg lists the
// servers itself.
func (z *ZooKeeper) writeConfig(nd *node, members []string) error {
	data := filepath.Join(nd.dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	var b strings.Builder
	b.WriteString("# written by zktest\n")
	seen := map[string]bool{}
	defaults := defaultSettings
	if z.cfg.tlsCA != nil {
		tlsDefaults, err := z.writeTLSFiles(nd)
		if err != nil {
			return err
		}
		defaults = append(append([][2]string(nil), defaults...), tlsDefaults...)
	}
	for _, kv := range defaults {
		v := kv[1]
		if o, ok := z.cfg.settings[kv[0]]; ok {
			v = o
		}
		seen[kv[0]] = true
		fmt.Fprintf(&b, "%s=%s\n", kv[0], v)
	}
	var extra []string
	for k := range z.cfg.settings {
		if !seen[k] && !reservedSettings[k] && !strings.HasPrefix(k, "server.") && !(nd.adminPort != 0 && strings.HasPrefix(k, "admin.server")) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		fmt.Fprintf(&b, "%s=%s\n", k, z.cfg.settings[k])
	}
	fmt.Fprintf(&b, "dataDir=%s\n", data)
	if !z.cfg.reconfig {
		// With a dynamic configuration the client port is on the
		// server's line.
		fmt.Fprintf(&b, "clientPort=%d\nclientPortAddress=127.0.0.1\n", nd.clientPort)
	}
	if nd.securePort != 0 {
		fmt.Fprintf(&b, "secureClientPort=%d\nsecureClientPortAddress=127.0.0.1\n", nd.securePort)
	}
	if nd.adminPort != 0 {
		fmt.Fprintf(&b, "admin.serverAddress=127.0.0.1\nadmin.serverPort=%d\n", nd.adminPort)
	}
	nodes := z.all()
	if z.cfg.reconfig {
		if err := writeDynamicConfig(&b, nd, members); err != nil {
			return err
		}
	} else if len(nodes) > 1 {
		b.WriteString("quorumListenOnAllIPs=false\n")
		for _, o := range nodes {
			quorum, elec := o.quorumPort, o.elecPort
			if z.peers != nil && o != nd {
				// nd reaches o through the links (nd→o): see partition.go.
				quorum, elec = z.peers.port(nd.index, o.index, quorumLink), z.peers.port(nd.index, o.index, electionLink)
			}
			fmt.Fprintf(&b, "server.%d=127.0.0.1:%d:%d\n", o.index+1, quorum, elec)
		}
	}
	if len(nodes) > 1 || z.cfg.reconfig {
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(nd.index+1)+"\n"), 0o644); err != nil {
			return fmt.Errorf("zktest: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(nd.dir, "zoo.cfg"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	return z.writeLogConfig(nd)
}

// writeTLSFiles writes nd's keystore (a server certificate and its key)
// and truststore (the CA) as PEM files, and returns the zoo.cfg settings
// that use them.
func (z *ZooKeeper) writeTLSFiles(nd *node) ([][2]string, error) {
	ca := z.cfg.tlsCA
	cert, err := ca.serverCert()
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := encodePEM(cert)
	if err != nil {
		return nil, err
	}
	keyStore := filepath.Join(nd.dir, "keystore.pem")
	trustStore := filepath.Join(nd.dir, "truststore.pem")
	if err := os.WriteFile(keyStore, append(keyPEM, certPEM...), 0o600); err != nil {
		return nil, fmt.Errorf("zktest: %w", err)
	}
	if err := os.WriteFile(trustStore, ca.CertPEM(), 0o644); err != nil {
		return nil, fmt.Errorf("zktest: %w", err)
	}
	return [][2]string{
		{"serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory"},
		{"ssl.keyStore.location", keyStore},
		{"ssl.keyStore.type", "PEM"},
		{"ssl.trustStore.location", trustStore},
		{"ssl.trustStore.type", "PEM"},
		{"ssl.clientAuth", "want"},
		{"authProvider.x509", "org.apache.zookeeper.server.auth.X509AuthenticationProvider"},
	}, nil
}

func (z *ZooKeeper) writeLogConfig(nd *node) error {
	var name, text string
	switch z.inst.logging {
	case logLogback:
		name = "logback.xml"
		text = `<configuration>
  <appender name="CONSOLE" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="CONSOLE"/></root>
</configuration>
`
	case logLog4j:
		name = "log4j.properties"
		text = `log4j.rootLogger=WARN, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{HH:mm:ss,SSS} [%t] %-5p %c{1} - %m%n
`
	default:
		return nil
	}
	if err := os.WriteFile(filepath.Join(nd.dir, name), []byte(text), 0o644); err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	return nil
}

func (z *ZooKeeper) javaArgs(nd *node) []string {
	args := []string{
		"-Xmx" + z.cfg.heap,
		"-XX:+UseSerialGC",
		"-XX:-UsePerfData",
		"-Djava.awt.headless=true",
		"-Djava.net.preferIPv4Stack=true",
		"-Dzookeeper.log.dir=" + nd.dir,
		"-Dzookeeper.jmx.log4j.disable=true",
	}
	if len(z.all()) > 1 || z.cfg.reconfig {
		// A member looking for a quorum retries its election connections
		// with a backoff that grows to a minute by default, and a quorum
		// that serves does not come looking for it: a member cut off for
		// a while would take up to a minute to rejoin.
		args = append(args, fmt.Sprintf("-Dzookeeper.fastleader.maxNotificationInterval=%d", maxNotificationInterval.Milliseconds()))
	}
	switch z.inst.logging {
	case logSimple:
		args = append(args,
			"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
			"-Dorg.slf4j.simpleLogger.showDateTime=true",
			"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS")
	case logLogback:
		args = append(args, "-Dlogback.configurationFile="+filepath.Join(nd.dir, "logback.xml"))
	case logLog4j:
		args = append(args, "-Dlog4j.configuration=file:"+filepath.Join(nd.dir, "log4j.properties"))
	}
	args = append(args, z.cfg.jvmArgs...)
	return append(args, "-cp", z.inst.Classpath,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(nd.dir, "zoo.cfg"))
}

// launch starts nd's JVM; output goes to server.log in the node directory.
func (z *ZooKeeper) launch(nd *node) error {
	logf, err := os.OpenFile(filepath.Join(nd.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	fmt.Fprintf(logf, "=== zktest: starting node %d at %s\n", nd.index, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(z.inst.Java, z.javaArgs(nd)...)
	cmd.Dir = nd.dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = sysProcAttr()
	if err := startProcess(cmd); err != nil {
		logf.Close()
		return fmt.Errorf("zktest: starting %s: %w", z.inst.Java, err)
	}
	p := &process{cmd: cmd, log: logf, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	slog.Debug("zktest: started ZooKeeper", "node", nd.index, "pid", cmd.Process.Pid, "port", nd.clientPort, "dir", nd.dir)
	z.mu.Lock()
	if z.stopped {
		// Stop ran while this node was being (re)started: it did not see
		// this process, so nobody else will stop it.
		z.mu.Unlock()
		stopProc(p, true)
		return errors.New("the servers have been stopped")
	}
	nd.proc = p
	z.mu.Unlock()
	return nil
}

// waitReady waits until every running node serves and, for an ensemble, a
// leader is known.
func (z *ZooKeeper) waitReady(ctx context.Context) error {
	z.mu.Lock()
	nodes := append([]*node(nil), z.nodes...)
	z.mu.Unlock()
	for _, nd := range nodes {
		if err := z.waitServing(ctx, nd); err != nil {
			return err
		}
	}
	if len(nodes) == 1 {
		return nil
	}
	for {
		if _, err := z.Leader(); err == nil {
			return nil
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("zktest: ensemble at %s elected no leader: %w", z.ConnectString(), err)
		}
	}
}

func (z *ZooKeeper) waitServing(ctx context.Context, nd *node) error {
	return z.waitNode(ctx, nd, "serving", Probe)
}

// waitNode waits until check(addr) succeeds for nd's client address, or
// fails once nd's process has exited; what names the state in errors.
func (z *ZooKeeper) waitNode(ctx context.Context, nd *node, what string, check func(context.Context, string) error) error {
	addr := nd.addr()
	z.mu.Lock()
	p := nd.proc
	z.mu.Unlock()
	var lastErr error
	for {
		if p == nil || !p.running() {
			status := "not started"
			if p != nil {
				status = fmt.Sprintf("exited (%v)", p.err)
			}
			return fmt.Errorf("zktest: ZooKeeper node %d (%s) %s before %s; %s:\n%s",
				nd.index, addr, status, what, filepath.Join(nd.dir, "server.log"), tail(filepath.Join(nd.dir, "server.log"), 30))
		}
		pctx, cancel := context.WithTimeout(ctx, Scale(2*time.Second))
		lastErr = check(pctx, addr)
		cancel()
		if lastErr == nil {
			return nil
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("zktest: ZooKeeper node %d (%s) not %s (%v; last probe: %v); %s:\n%s",
				nd.index, addr, what, err, lastErr, filepath.Join(nd.dir, "server.log"), tail(filepath.Join(nd.dir, "server.log"), 30))
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (nd *node) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(nd.clientPort)) }

// Servers returns the client address ("127.0.0.1:port") of every node, in
// node order, whether or not the node is running.
func (z *ZooKeeper) Servers() []string {
	nodes := z.all()
	s := make([]string, len(nodes))
	for i, nd := range nodes {
		s[i] = nd.addr()
	}
	return s
}

// SecureServers returns the TLS client address ("127.0.0.1:port") of every
// node, in node order; nil unless the servers were started WithTLS.
func (z *ZooKeeper) SecureServers() []string {
	if z.cfg.tlsCA == nil {
		return nil
	}
	nodes := z.all()
	s := make([]string, len(nodes))
	for i, nd := range nodes {
		s[i] = net.JoinHostPort("127.0.0.1", strconv.Itoa(nd.securePort))
	}
	return s
}

// AdminServers returns the address ("127.0.0.1:port") of every node's
// admin server (http://ADDR/commands/NAME), in node order; nil unless the
// servers were started WithAdminServer.
func (z *ZooKeeper) AdminServers() []string {
	if !z.cfg.admin {
		return nil
	}
	nodes := z.all()
	s := make([]string, len(nodes))
	for i, nd := range nodes {
		s[i] = net.JoinHostPort("127.0.0.1", strconv.Itoa(nd.adminPort))
	}
	return s
}

// ConnectString returns Servers joined with commas, the form most ZooKeeper
// clients take.
func (z *ZooKeeper) ConnectString() string { return strings.Join(z.Servers(), ",") }

// LogFile returns the path of node i's server log (the JVM's output; the
// server logs at WARN level). An index out of range fails the test.
func (z *ZooKeeper) LogFile(i int) string {
	if err := z.checkIndex(i); err != nil {
		z.fatalf("zktest: LogFile(%d): %v", i, err)
	}
	return filepath.Join(z.node(i).dir, "server.log")
}

// PID returns the process id of node i, or 0 if it is not running. An
// index out of range fails the test.
func (z *ZooKeeper) PID(i int) int {
	if err := z.checkIndex(i); err != nil {
		z.fatalf("zktest: PID(%d): %v", i, err)
	}
	nd := z.node(i)
	z.mu.Lock()
	defer z.mu.Unlock()
	if nd.proc == nil || !nd.proc.running() {
		return 0
	}
	return nd.proc.cmd.Process.Pid
}

// checkIndex reports an error unless i names a node.
func (z *ZooKeeper) checkIndex(i int) error {
	if n := len(z.all()); i < 0 || i >= n {
		return fmt.Errorf("node index %d out of range [0,%d)", i, n)
	}
	return nil
}

func (z *ZooKeeper) node(i int) *node {
	nodes := z.all()
	if i < 0 || i >= len(nodes) {
		panic(fmt.Sprintf("zktest: node index %d out of range [0,%d)", i, len(nodes)))
	}
	return nodes[i]
}

// all returns the nodes: those started first, then those that joined
// (Join), whether or not they run.
func (z *ZooKeeper) all() []*node {
	z.mu.Lock()
	defer z.mu.Unlock()
	return slices.Clone(z.nodes)
}

func (z *ZooKeeper) fatalf(format string, args ...any) {
	if z.tb != nil {
		z.tb.Helper()
		z.tb.Fatalf(format, args...)
	}
	panic(fmt.Sprintf(format, args...))
}

// Kill sends SIGKILL to node i's process (by PID) and waits until it has
// exited: a crash, with no goodbye to clients or peers. Killing a node that is
// not running does nothing; an index out of range fails the test.
func (z *ZooKeeper) Kill(i int) {
	if err := z.checkIndex(i); err != nil {
		z.fatalf("zktest: Kill(%d): %v", i, err)
	}
	nd := z.node(i)
	z.mu.Lock()
	p := nd.proc
	z.mu.Unlock()
	if p == nil {
		return
	}
	if err := killWait(p, syscall.SIGKILL, Scale(30*time.Second)); err != nil {
		z.fatalf("zktest: Kill(%d): %v", i, err)
	}
}

// Restart starts node i again on the same port with the same data, and waits
// until it serves clients again (for an ensemble member: until it has
// rejoined the quorum). A running node is stopped first (SIGTERM; a node
// paused with SIGSTOP is SIGKILLed after a few seconds instead). Restarts
// of one node run one at a time. An index out of range fails the test, and
// so does a port of the node's (client, secure client, quorum or election)
// that another process took while the node was down: the test fails at
// once, naming the port, and no JVM is left running (the node keeps its
// ports, which clients and the other members know; Restart once the port
// is free again).
//
// A member that cannot reach a majority of the ensemble, because a
// Partition cuts it from one or because too few other members run (the
// first of a killed ensemble to be restarted), cannot rejoin a quorum;
// Restart then returns once it runs and answers four-letter words (its Mode
// is an error: it does not serve until Heal, or until enough members run).
func (z *ZooKeeper) Restart(i int) {
	if err := z.restart(i); err != nil {
		z.fatalf("zktest: Restart(%d): %v", i, err)
	}
}

func (z *ZooKeeper) restart(i int) error {
	if err := z.checkIndex(i); err != nil {
		return err
	}
	nd := z.node(i)
	// Two restarts at once would each start a JVM on the node's ports:
	// one would fail to bind, and Stop would see only one of them.
	nd.restarting.Lock()
	defer nd.restarting.Unlock()
	z.mu.Lock()
	if z.stopped {
		z.mu.Unlock()
		return errors.New("the servers have been stopped")
	}
	p := nd.proc
	z.mu.Unlock()
	if p != nil && p.running() {
		// Not continued: a node a test paused is SIGKILLed once the
		// grace period is over, as in a crash.
		stopProc(p, false)
	}
	if err := z.checkPorts(nd); err != nil {
		return err
	}
	if err := z.launch(nd); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), Scale(z.cfg.startTimeout))
	defer cancel()
	var err error
	if !z.reachesQuorum(i) {
		err = z.waitNode(ctx, nd, "answering", answers)
	} else {
		err = z.waitServing(ctx, nd)
	}
	if err != nil && z.PID(i) == 0 {
		// Taken between the check and the JVM's bind: say so.
		if perr := z.checkPorts(nd); perr != nil {
			return fmt.Errorf("%w; %v", perr, err)
		}
	}
	return err
}

// checkPorts returns an error wrapping errPortTaken, naming the port, if
// another process listens on one of the ports nd's configuration gives it
// (its client address is also the one every client knows, so the node
// cannot move).
func (z *ZooKeeper) checkPorts(nd *node) error {
	type namedPort struct {
		name string
		port int
	}
	ports := []namedPort{{"client", nd.clientPort}, {"secure client", nd.securePort}, {"admin", nd.adminPort}}
	if len(z.all()) > 1 {
		ports = append(ports, namedPort{"quorum", nd.quorumPort}, namedPort{"election", nd.elecPort})
	}
	for _, p := range ports {
		if p.port == 0 {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port))
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			ln.Close()
			continue
		}
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("node %d's %s port %s is taken by another process (%w); it starts again only on its own port, once that is free", nd.index, p.name, addr, errPortTaken)
		}
		return fmt.Errorf("node %d's %s port %s: %w", nd.index, p.name, addr, err)
	}
	return nil
}

// reachesQuorum reports whether node i, running, reaches a majority of the
// ensemble, itself included, among the members that run, under the current
// partition: whether it can serve.
func (z *ZooKeeper) reachesQuorum(i int) bool {
	reach := 0
	nodes := z.all()
	for j := range nodes {
		if j == i || z.PID(j) != 0 && (z.peers == nil || z.peers.reaches(i, j)) {
			reach++
		}
	}
	return 2*reach > len(nodes)
}

// Leader returns the index of the node that is the leader (for a standalone
// server, 0), asking every running node with the "srvr" four-letter word. It
// returns an error wrapping ErrNoLeader while there is none, for example
// during an election.
func (z *ZooKeeper) Leader() (int, error) {
	addrs := z.Servers()
	for i := range addrs {
		if z.PID(i) == 0 {
			addrs[i] = "" // not running: no need to ask
		}
	}
	return LeaderOf(addrs)
}

// LeaderOf returns the index in addrs of the server that leads (or is
// standalone), asking each with the "srvr" four-letter word; an empty
// address is skipped. While there is none, during an election for example,
// the error wraps ErrNoLeader. Launchers of other kinds (zktest/container)
// share it.
func LeaderOf(addrs []string) (int, error) {
	var errs []error
	for i, addr := range addrs {
		if addr == "" {
			continue
		}
		mode, err := ServerMode(addr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if mode == "leader" || mode == "standalone" {
			return i, nil
		}
		errs = append(errs, fmt.Errorf("%s: %s", addr, mode))
	}
	return -1, fmt.Errorf("%w (%v)", ErrNoLeader, errors.Join(errs...))
}

// Mode returns node i's "Mode:" from the srvr four-letter word: "leader",
// "follower", "observer" or "standalone". A node that is not serving (for
// example during an election) gives an error, and so does an index out of
// range.
func (z *ZooKeeper) Mode(i int) (string, error) {
	if err := z.checkIndex(i); err != nil {
		return "", fmt.Errorf("zktest: Mode(%d): %w", i, err)
	}
	return ServerMode(z.node(i).addr())
}

// ServerMode returns the "Mode:" of the server at addr from the srvr
// four-letter word, waiting for it at most 2 s (scaled).
func ServerMode(addr string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Scale(2*time.Second))
	defer cancel()
	out, err := FourLetterWord(ctx, addr, "srvr")
	if err != nil {
		return "", err
	}
	return parseMode(out)
}

// parseMode finds the "Mode: x" line of srvr output. (go-zookeeper's FLWSrvr
// cannot parse Debian's version line, so zktest reads only what it needs.)
func parseMode(srvr string) (string, error) {
	sc := bufio.NewScanner(strings.NewReader(srvr))
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "Mode:"); ok {
			return strings.TrimSpace(m), nil
		}
	}
	first, _, _ := strings.Cut(strings.TrimSpace(srvr), "\n")
	return "", fmt.Errorf("zktest: no Mode in srvr output %q", first)
}

// FourLetterWord sends a four-letter-word command ("srvr", "mntr", "ruok",
// ...) to the server at addr and returns its whole answer. The servers zktest
// starts allow every command.
func FourLetterWord(ctx context.Context, addr, cmd string) (string, error) {
	s, err := dialRaw(ctx, addr)
	if err != nil {
		return "", err
	}
	defer s.close()
	if _, err := io.WriteString(s.conn, cmd); err != nil {
		return "", ctxErr(ctx, err)
	}
	out, err := io.ReadAll(s.conn)
	if err != nil {
		return string(out), ctxErr(ctx, fmt.Errorf("zktest: %s to %s: %w", cmd, addr, err))
	}
	return string(out), nil
}

// Stop stops every node (SIGTERM, then SIGKILL if a node has not exited
// within a few seconds) and waits for them to exit. A node that a test
// paused (SIGSTOP) is continued (SIGCONT) right after its SIGTERM, so that
// it exits at once. Stop is registered with t.Cleanup by the Start
// functions and may be called more than once. On the shared server Stop
// does nothing: Main stops it when the test binary ends.
func (z *ZooKeeper) Stop() {
	if z.shared {
		return
	}
	z.stop()
}

func (z *ZooKeeper) stop() {
	z.mu.Lock()
	z.stopped = true
	var procs []*process
	for _, nd := range z.nodes {
		if nd.proc != nil {
			procs = append(procs, nd.proc)
		}
	}
	z.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() { stopProc(p, true) })
	}
	wg.Wait()
	if z.peers != nil {
		z.peers.close()
	}
	z.ports.release()
}

// stopProc stops p by PID: SIGTERM, then SIGKILL. With cont, SIGTERM is
// followed by SIGCONT (where there is one), so that a process a test paused
// with SIGSTOP takes the SIGTERM at once instead of waiting out the grace
// period for SIGKILL.
func stopProc(p *process, cont bool) {
	var after func()
	if cont && sigCont != nil {
		after = func() { p.cmd.Process.Signal(sigCont) }
	}
	if err := signalWait(p, syscall.SIGTERM, Scale(5*time.Second), after); err == nil {
		return
	}
	if err := killWait(p, syscall.SIGKILL, Scale(30*time.Second)); err != nil {
		slog.Warn("zktest: ZooKeeper process did not exit", "pid", p.cmd.Process.Pid, "err", err)
	}
}

// killWait signals p (unless it has exited) and waits up to d for it to exit.
func killWait(p *process, sig os.Signal, d time.Duration) error {
	return signalWait(p, sig, d, nil)
}

// signalWait is killWait, running after (if not nil) once sig has been sent.
func signalWait(p *process, sig os.Signal, d time.Duration, after func()) error {
	if !p.running() {
		return nil
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %v to pid %d: %w", sig, p.cmd.Process.Pid, err)
	}
	if after != nil {
		after()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
		return fmt.Errorf("pid %d still running %v after %v", p.cmd.Process.Pid, d, sig)
	}
}

// logTails writes the end of every node's log to the test log.
func (z *ZooKeeper) logTails(t testing.TB) {
	for i, nd := range z.all() {
		t.Logf("zktest: last lines of node %d's log %s:\n%s", i, filepath.Join(nd.dir, "server.log"), tail(filepath.Join(nd.dir, "server.log"), 30))
	}
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// The shared standalone server of this test binary.
var shared struct {
	mu  sync.Mutex
	zk  *ZooKeeper
	err error
}

// SharedZooKeeper returns this test binary's shared standalone ZooKeeper
// server, starting it on the first call. Starting a JVM takes a second or
// two, so tests that need a server but no faults of their own should share
// one and keep out of each other's way with UniquePath.
//
// The shared server is stopped by Main (use it in TestMain) when the test
// binary ends; on Linux it also dies with the test binary. Stop on it does
// nothing. A test that Kills it takes it from every other test; if it is found
// dead on a later call it is restarted with its data. Options apply only to
// the call that starts it. Without a ZooKeeper install the test is skipped
// (failed with ZKIT_REQUIRE_ZOOKEEPER=1).
func SharedZooKeeper(t testing.TB, opts ...Option) *ZooKeeper {
	t.Helper()
	cfg := newConfig(opts)
	inst := cfg.installOrSkip(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.err != nil {
		t.Fatalf("zktest: the shared ZooKeeper failed to start: %v", shared.err)
	}
	if z := shared.zk; z != nil {
		if z.PID(0) == 0 {
			slog.Warn("zktest: shared ZooKeeper is not running; restarting it", "addr", z.Servers()[0])
			if err := z.restart(0); err != nil {
				t.Fatalf("zktest: restarting the shared ZooKeeper: %v", err)
			}
		}
		return z
	}
	removeStaleSharedDirs()
	dir, err := os.MkdirTemp("", fmt.Sprintf("zktest-shared-%d-", os.Getpid()))
	if err != nil {
		t.Fatalf("zktest: %v", err)
	}
	z, err := start(inst, dir, 1, cfg)
	if err != nil {
		os.RemoveAll(dir)
		shared.err = err
		t.Fatalf("%v", err)
	}
	z.shared = true
	shared.zk = z
	atMainExit(func() {
		shared.mu.Lock()
		defer shared.mu.Unlock()
		z.stop()
		os.RemoveAll(dir)
		shared.zk = nil
	})
	return z
}

// removeStaleSharedDirs deletes the data directories of shared servers whose
// test binary died without running Main (its server died with it).
func removeStaleSharedDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "zktest-shared-*-*"))
	for _, d := range dirs {
		pidStr, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), "zktest-shared-"), "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		slog.Debug("zktest: removing a dead test binary's shared ZooKeeper data", "dir", d)
		os.RemoveAll(d)
	}
}

func processAlive(pid int) bool {
	if runtime.GOOS == "windows" {
		return true // no signal 0 there: never guess
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

package zktest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Dynamic reconfiguration (ZooKeeper 3.5 and later).
//
// An ensemble started WithReconfig keeps its membership where ZooKeeper
// can change it at run time: the server lines go in a dynamic
// configuration file (dynamicConfigFile), each with the server's client
// port, and reconfigEnabled is on. A reconfiguration (the reconfig
// request, which only a super user or a client with write access to
// /zookeeper/config may send: see WithSuperUser) rewrites that file on
// every member.
//
// A new server joins as ZooKeeper's administrator guide has it (the
// "adding servers" procedure): it starts with the current configuration
// plus itself listed as an observer, which keeps it from forming a quorum
// of its own; it finds the leader, adopts the committed configuration (in
// which it is absent) and syncs as a non-voting follower. Only then can a
// reconfiguration add it, as a participant (or an observer), since the
// leader accepts a new configuration only if a quorum of it is connected
// and up to date. Join starts such a server; ServerLine is what the
// reconfiguration adds. A server removed by a reconfiguration keeps
// running, as a non-voting follower, until it is stopped (Kill).

// WithReconfig starts an ensemble that dynamic reconfiguration can change:
// reconfigEnabled=true, standaloneEnabled=false (so that it may shrink to
// one participant), and the server lines, with their client ports, in a
// dynamic configuration file. Its members connect to each other directly
// (no Partition). Join adds servers to it.
func WithReconfig() Option {
	return func(c *config) {
		c.reconfig = true
		c.settings["reconfigEnabled"] = "true"
		c.settings["standaloneEnabled"] = "false"
	}
}

// WithSuperUser makes a client that adds digest auth "user:password" a
// super user of every node (the JVM's
// zookeeper.DigestAuthenticationProvider.superDigest), as ServerSuperUser
// does for the reference server. A reconfiguration needs one, or write
// access to /zookeeper/config.
func WithSuperUser(user, password string) Option {
	return WithJVMArgs("-Dzookeeper.DigestAuthenticationProvider.superDigest=" + superDigest(user, password))
}

// ServerLine is node i's line in a dynamic configuration, in the form a
// reconfiguration adds: "server.ID=127.0.0.1:QUORUM:ELECTION:ROLE;
// 127.0.0.1:CLIENT", role "participant" or "observer". Node i's server id
// is i+1. An index out of range fails the test.
func (z *ZooKeeper) ServerLine(i int, role string) string {
	if err := z.checkIndex(i); err != nil {
		z.fatalf("zktest: ServerLine(%d): %v", i, err)
	}
	return z.node(i).serverLine(role)
}

func (nd *node) serverLine(role string) string {
	return fmt.Sprintf("server.%d=127.0.0.1:%d:%d:%s;127.0.0.1:%d", nd.index+1, nd.quorumPort, nd.elecPort, role, nd.clientPort)
}

// Join starts a new server for an ensemble started WithReconfig and
// returns its index (its server id is the index + 1) once it serves
// clients: synced with the leader as a non-voting follower, not yet a
// member (see the procedure above). Add it with a reconfiguration of
// ServerLine(i, "participant"). Its options are the ensemble's. It fails
// the test if the ensemble was not started WithReconfig, or if the server
// does not come up.
func (z *ZooKeeper) Join() int {
	i, err := z.join()
	if err != nil {
		z.fatalf("zktest: Join: %v", err)
	}
	return i
}

func (z *ZooKeeper) join() (int, error) {
	if !z.cfg.reconfig {
		return 0, errors.New("the ensemble was not started WithReconfig")
	}
	members, err := z.currentMembers()
	if err != nil {
		return 0, err
	}
	perNode := 3
	if z.cfg.admin {
		perNode++
	}
	claims, err := claimFreePorts(perNode)
	if err != nil {
		return 0, err
	}
	ports := claims.ports
	z.mu.Lock()
	if z.stopped {
		z.mu.Unlock()
		claims.release()
		return 0, errors.New("the servers have been stopped")
	}
	z.ports.add(claims)
	nd := &node{index: len(z.nodes), clientPort: ports[0], quorumPort: ports[1], elecPort: ports[2],
		dir: filepath.Join(z.dir, fmt.Sprintf("node%d", len(z.nodes)))}
	if z.cfg.admin {
		nd.adminPort = ports[3]
	}
	z.nodes = append(z.nodes, nd)
	z.mu.Unlock()
	if err := z.writeConfig(nd, append(members, nd.serverLine("observer"))); err != nil {
		return 0, err
	}
	if err := z.launch(nd); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), Scale(z.cfg.startTimeout))
	defer cancel()
	return nd.index, z.waitServing(ctx, nd)
}

// initialMembers are the server lines of an ensemble started
// WithReconfig: every node, a participant.
func (z *ZooKeeper) initialMembers() []string {
	var lines []string
	for _, nd := range z.all() {
		lines = append(lines, nd.serverLine("participant"))
	}
	return lines
}

// currentMembers are the server lines of the configuration a running node
// holds: ZooKeeper rewrites the dynamic configuration file a node's
// zoo.cfg names at every reconfiguration.
func (z *ZooKeeper) currentMembers() ([]string, error) {
	var errs []error
	for i, nd := range z.all() {
		if z.PID(i) == 0 {
			continue
		}
		lines, err := dynamicMembers(filepath.Join(nd.dir, "zoo.cfg"))
		if err == nil {
			return lines, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no running node's dynamic configuration could be read: %w", errors.Join(errs...))
}

// dynamicMembers reads the server lines of the dynamic configuration file
// that the zoo.cfg at path names.
func dynamicMembers(path string) ([]string, error) {
	static, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var file string
	for _, line := range strings.Split(string(static), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "dynamicConfigFile="); ok {
			file = v
		}
	}
	if file == "" {
		return nil, fmt.Errorf("%s names no dynamicConfigFile", path)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "server.") {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s lists no server", file)
	}
	return lines, sc.Err()
}

// writeDynamicConfig writes nd's dynamic configuration file, members,
// and names it in its zoo.cfg, b.
func writeDynamicConfig(b *strings.Builder, nd *node, members []string) error {
	file := filepath.Join(nd.dir, "zoo.cfg.dynamic")
	if err := os.WriteFile(file, []byte(strings.Join(members, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	fmt.Fprintf(b, "quorumListenOnAllIPs=false\ndynamicConfigFile=%s\n", file)
	return nil
}

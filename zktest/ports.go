package zktest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// portClaims are ports this process chose for a ZooKeeper's nodes, each
// claimed until release. A node's ports are bound again when it restarts
// (Restart), and in between they must stay free, from two kinds of
// takers:
//
//   - The kernel hands the ports of its ephemeral range to every outgoing
//     connection on the machine, and on a busy machine one of them took a
//     killed member's quorum port within seconds. So ports are chosen
//     below that range, where only someone binding them takes them.
//   - Other test processes binding them: go test runs packages side by
//     side, each starting ensembles, and one picked the client port of
//     another's killed member (Restart then failed with "port taken").
//     So every port is claimed with a lock on a file named after it in a
//     directory all zktest processes share, and a port claimed by a live
//     process is never chosen. The lock dies with its process, so a killed
//     test binary leaves no claim behind. (The files stay, empty:
//     removing one could let two processes lock two files of one name.)
type portClaims struct {
	ports []int
	files []*os.File
	once  sync.Once
}

// claimFreePorts returns n distinct ports, each free on 127.0.0.1 and
// claimed for this process, chosen below the kernel's range of ephemeral
// ports where it can.
func claimFreePorts(n int) (*portClaims, error) {
	c := &portClaims{}
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	lo, hi := stablePortRange()
	for tries := 0; len(c.ports) < n; tries++ {
		if tries >= 100*n || hi <= lo {
			// No stable port found: the kernel's choice, unclaimed.
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				c.release()
				return nil, fmt.Errorf("zktest: finding a free port: %w", err)
			}
			ls = append(ls, l)
			c.ports = append(c.ports, l.Addr().(*net.TCPAddr).Port)
			continue
		}
		port := lo + rand.IntN(hi-lo)
		f, ok := claimPort(port)
		if !ok {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			f.Close()
			continue
		}
		ls = append(ls, l)
		c.ports = append(c.ports, port)
		c.files = append(c.files, f)
	}
	return c, nil
}

// claimPort claims port for this process, unless another process holds
// it. Where claims cannot be made (no lock files on this system, or a
// directory this user cannot write), every port counts as claimed and f is
// nil: the port's bind is then the only check, as it was before claims.
func claimPort(port int) (f *os.File, ok bool) {
	dir := filepath.Join(os.TempDir(), "zktest-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, true
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, true
	}
	switch lockFile(f) {
	case nil:
		return f, true
	case errLockHeld:
		f.Close()
		return nil, false
	default:
		f.Close()
		return nil, true
	}
}

// add makes more's ports c's too, released with c's.
func (c *portClaims) add(more *portClaims) {
	c.ports = append(c.ports, more.ports...)
	c.files = append(c.files, more.files...)
}

// release lets the ports go, for this process and others. It may be called
// more than once, and on nil.
func (c *portClaims) release() {
	if c == nil {
		return
	}
	c.once.Do(func() {
		for _, f := range c.files {
			f.Close()
		}
	})
}

// stablePortRange is [lo, hi): ports that the kernel does not hand out to
// outgoing connections, below its ephemeral range (Linux's
// ip_local_port_range, 32768 and up by default), and above the ports
// that services usually claim.
func stablePortRange() (lo, hi int) {
	hi = 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				hi = v
			}
		}
	}
	return max(hi/2, 10000), hi
}

package refserver_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
	"github.com/zkit-dev/zkit/internal/wireclient"
	"github.com/zkit-dev/zkit/zktest/internal/refserver"
)

// The measurements of how the reference server holds against hostile
// clients: its resident memory (VmRSS, the server running alone in a child
// process), its Go heap (HeapAlloc: memory allocated but not yet touched
// is not resident) and another session's ping latency while
//
//   - a client sends 1,500 getData of a 1 MB node and never reads
//     (TestMeasureNonReadingClient);
//   - 1,000 connections each declare a 1 MB frame and send nothing more
//     (TestMeasureDeclaredFrames).
//
// They print numbers rather than pass or fail, and take about eight seconds
// each; they run only with ZKIT_MEASURE=1:
//
//	ZKIT_MEASURE=1 go test ./zktest/internal/refserver -run TestMeasure -v
//
// The other session connects from 127.0.0.2, so that a per-address
// connection limit on the attacker's 127.0.0.1 does not apply to it.

const measureEnv = "ZKIT_MEASURE"

func TestMeasureNonReadingClient(t *testing.T) {
	srv := startMeasured(t)
	ctl := srv.control(t)
	big := make([]byte, 1_000_000)
	if _, h, err := ctl.Call(jute.OpCreate, &jute.CreateRequest{Path: "/big", Data: big, ACL: worldACL, Flags: 0}, nil); err != nil || h.Err != 0 {
		t.Fatalf("create /big: %v %v", h, err)
	}
	base := srv.sample(t)

	bad, err := wireclient.Dial(srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if _, err := bad.Handshake(0, nil, 30*time.Second, 0); err != nil {
		t.Fatal(err)
	}
	var reqs []byte
	for i := range 1500 {
		reqs = append(reqs, jute.Frame(&jute.RequestHeader{Xid: int32(i + 1), Type: jute.OpGetData}, &jute.GetDataRequest{Path: "/big"})...)
	}
	go bad.WriteRaw(reqs) // blocks once the server stops reading
	srv.report(t, ctl, base, fmt.Sprintf("1,500 getData of a 1 MB node (%d KB sent), never read", len(reqs)>>10))
}

func TestMeasureDeclaredFrames(t *testing.T) {
	srv := startMeasured(t)
	ctl := srv.control(t)
	base := srv.sample(t)
	var conns []net.Conn
	refused := 0
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 1000 {
		c, err := net.DialTimeout("tcp", srv.addr, 5*time.Second)
		if err != nil {
			refused++
			continue
		}
		c.Write(binary.BigEndian.AppendUint32(nil, 0xfffff))
		c.Write(make([]byte, 100)) // the start of the frame, never the rest
		conns = append(conns, c)
	}
	srv.report(t, ctl, base, fmt.Sprintf("1,000 connections each declaring a 1 MB frame (%d refused at connect)", refused))
	open := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil && os.IsTimeout(err) {
			open++
		}
	}
	t.Logf("connections the server kept open: %d of %d", open, len(conns))
}

var worldACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// measured is a reference server running alone in a child process.
type measured struct {
	cmd   *exec.Cmd
	addr  string
	stdin io.Writer
	out   *bufio.Reader
}

// TestMeasuredServer is the child process: it serves until its stdin
// closes, and answers each line it reads with its heap in use.
func TestMeasuredServer(t *testing.T) {
	if os.Getenv(measureEnv) != "child" {
		t.Skip("the child process of TestMeasure*")
	}
	s, err := refserver.Start("127.0.0.1:0", refserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Printf("addr %s\n", s.Addr())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Printf("%d\n", ms.HeapAlloc)
	}
}

func startMeasured(t *testing.T) *measured {
	if os.Getenv(measureEnv) != "1" {
		t.Skipf("a measurement: set %s=1", measureEnv)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMeasuredServer$")
	cmd.Env = append(os.Environ(), measureEnv+"=child")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "addr ")
	if err != nil || !ok {
		t.Fatalf("child: %q %v", line, err)
	}
	return &measured{cmd: cmd, addr: addr, stdin: stdin, out: out}
}

// heap is the child's Go heap in use, in bytes.
func (m *measured) heap(t *testing.T) int64 {
	fmt.Fprintln(m.stdin)
	line, err := m.out.ReadString('\n')
	n, perr := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil || perr != nil {
		t.Fatalf("child heap: %q %v", line, err)
	}
	return n
}

// control opens the other session, from 127.0.0.2.
func (m *measured) control(t *testing.T) *wireclient.Client {
	c, err := dialFrom(m.addr, net.IPv4(127, 0, 0, 2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rss is the child's resident memory in bytes.
func (m *measured) rss(t *testing.T) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// memory is the child's resident memory and Go heap in use, in bytes.
type memory struct{ rss, heap int64 }

func (m *measured) sample(t *testing.T) memory { return memory{m.rss(t), m.heap(t)} }

// report samples the child's memory and pings on ctl for eight seconds
// (less than the 10 s a connection may stay without a session), and logs
// the peaks against base and the latencies.
func (m *measured) report(t *testing.T, ctl *wireclient.Client, base memory, what string) {
	peak := base
	var lat []time.Duration
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); {
		start := time.Now()
		if _, _, err := ctl.Call(jute.OpPing, nil, nil); err != nil {
			t.Fatalf("the other session's ping: %v", err)
		}
		lat = append(lat, time.Since(start))
		now := m.sample(t)
		peak = memory{max(peak.rss, now.rss), max(peak.heap, now.heap)}
		time.Sleep(50 * time.Millisecond)
	}
	slices.Sort(lat)
	t.Logf("%s: server RSS %d MB before, peak %d MB; heap %d MB before, peak %d MB; the other session's ping: median %v, p99 %v, max %v (%d pings)",
		what, base.rss>>20, peak.rss>>20, base.heap>>20, peak.heap>>20, lat[len(lat)/2].Round(time.Microsecond),
		lat[len(lat)*99/100].Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond), len(lat))
}

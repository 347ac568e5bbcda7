package recipetest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest"
)

// curatorSource is the Java side of CuratorPeer, driven over stdin with the
// line protocol described there. Each ID is one Curator lock object with a
// thread of its own (Curator locks belong to threads).
const curatorSource = `
import java.io.*;
import java.util.*;
import java.util.concurrent.*;
import org.apache.curator.framework.*;
import org.apache.curator.framework.recipes.locks.*;
import org.apache.curator.retry.RetryOneTime;

public class CuratorPeer {
    static final Map<String, ExecutorService> threads = new ConcurrentHashMap<>();
    static final Map<String, InterProcessLock> locks = new ConcurrentHashMap<>();
    static synchronized void out(String s) { System.out.println(s); System.out.flush(); }
    public static void main(String[] args) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.newClient(args[0], 30000, 15000, new RetryOneTime(100));
        c.start();
        c.blockUntilConnected();
        out("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            String id = f[0], kind = f[1], path = f[2], op = f[3];
            InterProcessLock l = locks.computeIfAbsent(id, k ->
                kind.equals("mutex") ? new InterProcessMutex(c, path)
                : kind.equals("read") ? new InterProcessReadWriteLock(c, path).readLock()
                : new InterProcessReadWriteLock(c, path).writeLock());
            threads.computeIfAbsent(id, k -> Executors.newSingleThreadExecutor()).submit(() -> {
                try {
                    switch (op) {
                        case "acquire": l.acquire(); out(id + " acquired"); break;
                        case "try": out(id + (l.acquire(Long.parseLong(f[4]), TimeUnit.MILLISECONDS) ? " acquired" : " timeout")); break;
                        case "release": l.release(); out(id + " released"); break;
                        default: out(id + " error unknown op " + op);
                    }
                } catch (Exception e) {
                    out(id + " error " + e);
                }
            });
        }
        for (ExecutorService e : threads.values()) e.shutdownNow();
        c.close();
    }
}
`

var curatorJars = []string{"curator-framework", "curator-client", "curator-recipes", "guava", "zookeeper",
	"zookeeper-jute", "slf4j-api", "slf4j-nop", "netty-handler", "netty-common", "netty-buffer",
	"netty-transport", "netty-codec", "netty-resolver", "netty-transport-native-epoll",
	"netty-transport-native-unix-common", "failureaccess"}

// javaBuild is one compiled peer class.
type javaBuild struct {
	once sync.Once
	dir  string
	err  error
}

var (
	curatorCP struct {
		once     sync.Once
		cp, skip string
	}
	javaBuilds sync.Map // class name -> *javaBuild
)

// curatorClasspath finds Curator's jars and javac once per test binary. It
// skips the test when they are missing, unless real ZooKeeper (and so the
// interop partners) is required.
func curatorClasspath(t *testing.T) string {
	t.Helper()
	b := &curatorCP
	b.once.Do(func() {
		if _, err := exec.LookPath("javac"); err != nil {
			b.skip = fmt.Sprintf("javac not found: %v", err)
			return
		}
		var cp []string
		for _, j := range curatorJars {
			p := filepath.Join("/usr/share/java", j+".jar")
			if _, err := os.Stat(p); err != nil {
				if j == "failureaccess" {
					continue // optional
				}
				b.skip = fmt.Sprintf("%s missing (apt-get install libcurator-recipes-java)", p)
				return
			}
			cp = append(cp, p)
		}
		b.cp = strings.Join(cp, ":")
	})
	if b.skip != "" {
		switch strings.ToLower(os.Getenv(zktest.RequireZooKeeperEnv)) {
		case "1", "true", "yes":
			t.Fatalf("Curator interop: %s (%s is set)", b.skip, zktest.RequireZooKeeperEnv)
		}
		t.Skipf("skipping Curator interop: %s", b.skip)
	}
	return b.cp
}

// buildJava compiles the public class named class from source against
// Curator's jars and the jars in extra (a classpath, possibly empty), once
// per test binary, and returns the directory holding the class files and
// the classpath to run it with.
func buildJava(t *testing.T, class, source, extra string) (classDir, classpath string) {
	t.Helper()
	cp := curatorClasspath(t)
	if extra != "" {
		cp += ":" + extra
	}
	v, _ := javaBuilds.LoadOrStore(class, &javaBuild{})
	b := v.(*javaBuild)
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "zkit-java-peer-")
		if err != nil {
			b.err = err
			return
		}
		b.dir = dir
		src := filepath.Join(dir, class+".java")
		if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
			b.err = err
			return
		}
		out, err := exec.Command("javac", "-implicit:none", "-cp", cp, "-d", dir, src).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("javac %s: %v\n%s", class, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.dir, cp
}

// CuratorPeer is a running Java process with Curator locks, driven one
// line at a time: "ID KIND PATH OP [MS]" with KIND mutex, read or write
// and OP acquire (in the background), try MS, or release. It answers
// "ID acquired", "ID timeout", "ID released" or "ID error ...". Each ID is
// one Curator lock object with a thread of its own. StartJava and
// StartKazoo start peers of other recipes, with line protocols of their
// own, as CuratorPeers too.
type CuratorPeer struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
}

// StartCurator compiles the lock peer (once per test binary) and starts it
// connected to servers; it is stopped when the test ends. It skips the test
// when javac or Curator's jars are missing, unless ZKIT_REQUIRE_ZOOKEEPER
// is set.
func StartCurator(t *testing.T, servers []string) *CuratorPeer {
	t.Helper()
	return StartJava(t, "CuratorPeer", curatorSource, servers)
}

// StartJava compiles the public class named class from source against
// Curator's jars (once per test binary) and starts it with the connect
// string as its only argument. Like the lock peer, it must print "ready"
// once connected, then answer the lines it reads on stdin with lines on
// stdout, and exit when stdin closes. Recipes other than the locks give
// their own peers this way (LeaderLatch, DistributedAtomicLong, ...).
func StartJava(t *testing.T, class, source string, servers []string) *CuratorPeer {
	t.Helper()
	return startJava(t, class, source, "", servers)
}

// startJava is StartJava with the jars of extra (a classpath) beside
// Curator's.
func startJava(t *testing.T, class, source, extra string, servers []string) *CuratorPeer {
	t.Helper()
	dir, cp := buildJava(t, class, source, extra)
	p := startPeer(t, exec.Command("java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", dir+":"+cp, class, strings.Join(servers, ",")))
	p.Expect("ready")
	return p
}

// startPeer starts cmd, a peer that answers lines on its stdin with lines
// on its stdout, and stops it when the test ends: its stdin is closed,
// and it is killed if it has not exited a while later.
func startPeer(t *testing.T, cmd *exec.Cmd) *CuratorPeer {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &CuratorPeer{t: t, in: in, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(zktest.Scale(10 * time.Second)):
			cmd.Process.Kill()
			<-done
		}
	})
	return p
}

// Send writes one command line.
func (p *CuratorPeer) Send(format string, args ...any) {
	p.t.Helper()
	if _, err := fmt.Fprintf(p.in, format+"\n", args...); err != nil {
		p.t.Fatalf("curator peer: %v", err)
	}
}

// Next waits for the next line and returns it.
func (p *CuratorPeer) Next() string {
	p.t.Helper()
	select {
	case got, ok := <-p.lines:
		if !ok {
			p.t.Fatal("curator peer exited")
		}
		return got
	case <-time.After(zktest.Scale(30 * time.Second)):
		p.t.Fatal("curator peer: timed out waiting for a line")
	}
	return ""
}

// Expect waits for the next line and checks it.
func (p *CuratorPeer) Expect(want string) {
	p.t.Helper()
	if got := p.Next(); got != want {
		p.t.Fatalf("curator peer said %q, want %q", got, want)
	}
}

// Quiet checks that the peer says nothing for a moment (used to show that
// a background acquire is still waiting).
func (p *CuratorPeer) Quiet(what string) {
	p.t.Helper()
	select {
	case got := <-p.lines:
		p.t.Fatalf("curator peer said %q while %s", got, what)
	case <-time.After(zktest.Scale(100 * time.Millisecond)):
	}
}

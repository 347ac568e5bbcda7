package recipetest

import "testing"

// semaphoreSource is the Java side of StartSemaphorePeer: Curator's
// InterProcessSemaphoreV2 (5.4), driven one line at a time over stdin.
// Every semaphore of the process shares one CuratorFramework (one
// session); each ID is one InterProcessSemaphoreV2 object with a thread of
// its own.
const semaphoreSource = `
import java.io.*;
import java.util.*;
import java.util.concurrent.*;
import org.apache.curator.framework.*;
import org.apache.curator.framework.recipes.locks.*;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;

public class SemaphorePeer {
    static final Map<String, ExecutorService> threads = new ConcurrentHashMap<>();
    static final Map<String, InterProcessSemaphoreV2> sems = new ConcurrentHashMap<>();
    static final Map<String, Lease> leases = new ConcurrentHashMap<>();
    static CuratorFramework c;
    static synchronized void out(String s) { System.out.println(s); System.out.flush(); }

    // churn holds a lease rounds times: acquire, create an ephemeral
    // sequential marker under inside, count the markers there (the holders
    // of every kind at that moment), wait 2 ms, delete the marker, release.
    // It prints the most markers it counted.
    static void churn(String id, InterProcessSemaphoreV2 s, int rounds, String inside) throws Exception {
        int most = 0;
        for (int r = 0; r < rounds; r++) {
            Lease l = s.acquire();
            String m = c.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(inside + "/j-");
            most = Math.max(most, c.getChildren().forPath(inside).size());
            Thread.sleep(2);
            c.delete().forPath(m);
            s.returnLease(l);
        }
        out(id + " churned " + most);
    }

    public static void main(String[] args) throws Exception {
        c = CuratorFrameworkFactory.newClient(args[0], 30000, 15000, new RetryOneTime(100));
        c.start();
        c.blockUntilConnected();
        out("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            String id = f[0], op = f[1];
            threads.computeIfAbsent(id, k -> Executors.newSingleThreadExecutor()).submit(() -> {
                try {
                    switch (op) {
                        case "acquire": {
                            InterProcessSemaphoreV2 s = sems.computeIfAbsent(id, k -> new InterProcessSemaphoreV2(c, f[2], Integer.parseInt(f[3])));
                            leases.put(id, s.acquire());
                            out(id + " acquired");
                            break;
                        }
                        case "try": {
                            InterProcessSemaphoreV2 s = sems.computeIfAbsent(id, k -> new InterProcessSemaphoreV2(c, f[2], Integer.parseInt(f[3])));
                            Lease l = s.acquire(Long.parseLong(f[4]), TimeUnit.MILLISECONDS);
                            if (l == null) {
                                out(id + " timeout");
                            } else {
                                leases.put(id, l);
                                out(id + " acquired");
                            }
                            break;
                        }
                        case "release":
                            leases.remove(id).close();
                            out(id + " released");
                            break;
                        case "churn":
                            churn(id, new InterProcessSemaphoreV2(c, f[2], Integer.parseInt(f[3])), Integer.parseInt(f[4]), f[5]);
                            break;
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

// StartSemaphorePeer compiles the InterProcessSemaphoreV2 peer (once per
// test binary) and starts it connected to servers; it is stopped when the
// test ends. It is driven one line at a time, "ID OP [ARGS]", each ID one
// semaphore object with a thread of its own:
//
//	ID acquire PATH MAX              acquire one lease of the semaphore PATH with MAX leases; prints "ID acquired"
//	ID try PATH MAX MS               the same, giving up after MS ms; prints "ID acquired" or "ID timeout"
//	ID release                       returns the lease; prints "ID released"
//	ID churn PATH MAX ROUNDS INSIDE  ROUNDS times: acquire, create an ephemeral sequential node
//	                                 under INSIDE, count INSIDE's children, delete the node,
//	                                 release; prints "ID churned N", N the highest count
//
// Errors print "ID error ...". It skips the test when javac or Curator's
// jars are missing, unless ZKIT_REQUIRE_ZOOKEEPER is set.
func StartSemaphorePeer(t *testing.T, servers []string) *CuratorPeer {
	t.Helper()
	return StartJava(t, "SemaphorePeer", semaphoreSource, servers)
}

package recipetest

import "testing"

// barrierSource is the Java side of StartBarrierPeer: Curator's
// DistributedDoubleBarrier and DistributedBarrier, driven one line at a
// time. Each ID is one barrier object with a thread of its own.
const barrierSource = `
import java.io.*;
import java.util.*;
import java.util.concurrent.*;
import org.apache.curator.framework.*;
import org.apache.curator.framework.recipes.barriers.*;
import org.apache.curator.retry.RetryOneTime;

public class BarrierPeer {
    static final Map<String, ExecutorService> threads = new ConcurrentHashMap<>();
    static final Map<String, Object> barriers = new ConcurrentHashMap<>();
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
            String id = f[0], kind = f[1], path = f[2];
            threads.computeIfAbsent(id, k -> Executors.newSingleThreadExecutor()).submit(() -> {
                try {
                    if (kind.equals("double")) {
                        int count = Integer.parseInt(f[3]);
                        String op = f[4];
                        long ms = Long.parseLong(f[5]);
                        DistributedDoubleBarrier b = (DistributedDoubleBarrier) barriers.computeIfAbsent(id, k -> new DistributedDoubleBarrier(c, path, count));
                        switch (op) {
                            case "enter": out(id + (b.enter(ms, TimeUnit.MILLISECONDS) ? " entered" : " timeout")); break;
                            case "leave": out(id + (b.leave(ms, TimeUnit.MILLISECONDS) ? " left" : " timeout")); break;
                            default: out(id + " error unknown op " + op);
                        }
                    } else {
                        String op = f[3];
                        DistributedBarrier b = (DistributedBarrier) barriers.computeIfAbsent(id, k -> new DistributedBarrier(c, path));
                        switch (op) {
                            case "set": b.setBarrier(); out(id + " set"); break;
                            case "remove": b.removeBarrier(); out(id + " removed"); break;
                            case "wait": out(id + (b.waitOnBarrier(Long.parseLong(f[4]), TimeUnit.MILLISECONDS) ? " passed" : " timeout")); break;
                            default: out(id + " error unknown op " + op);
                        }
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

// StartBarrierPeer starts a Java process running Curator's barriers,
// driven one line at a time:
//
//	ID double PATH COUNT enter|leave MS   DistributedDoubleBarrier: "ID entered", "ID left" or "ID timeout"
//	ID simple PATH set|remove             DistributedBarrier: "ID set", "ID removed"
//	ID simple PATH wait MS                "ID passed" or "ID timeout"
//
// Errors answer "ID error ...". Each ID is one barrier object (one member)
// with a thread of its own. Like StartCurator, it skips the test without
// javac or Curator's jars unless ZKIT_REQUIRE_ZOOKEEPER is set.
func StartBarrierPeer(t *testing.T, servers []string) *CuratorPeer {
	t.Helper()
	return StartJava(t, "BarrierPeer", barrierSource, servers)
}

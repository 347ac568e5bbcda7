package recipetest

import "testing"

// curatorCounterSource is the Java side of StartCuratorCounter: Curator's
// DistributedAtomicLong with RetryNTimes(MAX, 0), as the anchors run it.
const curatorCounterSource = `
import java.io.*;
import java.util.*;
import java.util.concurrent.*;
import org.apache.curator.framework.*;
import org.apache.curator.framework.recipes.atomic.*;
import org.apache.curator.retry.*;

public class CuratorCounterPeer {
    static synchronized void out(String s) { System.out.println(s); System.out.flush(); }
    public static void main(String[] args) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.newClient(args[0], 30000, 15000, new RetryOneTime(100));
        c.start();
        c.blockUntilConnected();
        out("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        ExecutorService pool = Executors.newCachedThreadPool();
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            String op = f[0], path = f[1];
            try {
                DistributedAtomicLong d = new DistributedAtomicLong(c, path, new RetryNTimes(Integer.MAX_VALUE, 0));
                switch (op) {
                    case "get": out("value " + d.get().postValue()); break;
                    case "add": {
                        AtomicValue<Long> v = d.add(Long.parseLong(f[2]));
                        out(v.succeeded() ? "value " + v.postValue() : "failed");
                        break;
                    }
                    case "increments": {
                        // THREADS threads each increment N times, then one line.
                        int threads = Integer.parseInt(f[2]), n = Integer.parseInt(f[3]);
                        List<Future<Long>> fs = new ArrayList<>();
                        for (int t = 0; t < threads; t++) {
                            fs.add(pool.submit(() -> {
                                long ok = 0;
                                for (int i = 0; i < n; i++) {
                                    if (d.increment().succeeded()) ok++;
                                }
                                return ok;
                            }));
                        }
                        long ok = 0;
                        for (Future<Long> x : fs) ok += x.get();
                        out("incremented " + ok);
                        break;
                    }
                    default: out("error unknown op " + op);
                }
            } catch (Exception e) {
                out("error " + e);
            }
        }
        pool.shutdownNow();
        c.close();
    }
}
`

// StartCuratorCounter starts a Java process driving Curator's
// DistributedAtomicLong (with RetryNTimes(MAX, 0)) on servers, one line at
// a time: "get PATH" answers "value V"; "add PATH DELTA" answers "value V"
// (the value after it) or "failed"; "increments PATH THREADS N" runs
// THREADS threads each incrementing N times and answers "incremented K"
// (the increments that succeeded). Errors are "error ...". It skips like
// StartCurator when Curator is missing.
func StartCuratorCounter(t *testing.T, servers []string) *CuratorPeer {
	t.Helper()
	return StartJava(t, "CuratorCounterPeer", curatorCounterSource, servers)
}

package recipetest

import "testing"

// latchSource is the Java side of StartLeaderLatch: Curator's LeaderLatch
// (5.4), driven one line at a time over stdin. Every LeaderLatch of the
// process shares one CuratorFramework (one session).
const latchSource = `
import java.io.*;
import java.util.*;
import java.util.concurrent.*;
import org.apache.curator.framework.*;
import org.apache.curator.framework.recipes.leader.*;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

public class LatchPeer {
    static final Map<String, LeaderLatch> latches = new ConcurrentHashMap<>();
    static CuratorFramework c;
    static synchronized void out(String s) { System.out.println(s); System.out.flush(); }

    static LeaderLatch start(String id, String path, boolean announce) throws Exception {
        LeaderLatch l = new LeaderLatch(c, path, id);
        if (announce) {
            l.addListener(new LeaderLatchListener() {
                public void isLeader() { out(id + " leader"); }
                public void notLeader() { }
            });
        }
        l.start();
        return l;
    }

    // churn leads rounds times: wait for leadership, hold the holder node
    // (an ephemeral node only one leader at a time can create), let go of
    // it, close the latch and join again at the back.
    static void churn(String id, String path, int rounds, String holder) {
        int overlaps = 0;
        try {
            for (int r = 0; r < rounds; r++) {
                LeaderLatch l = start(id, path, false);
                l.await();
                try {
                    c.create().withMode(CreateMode.EPHEMERAL).forPath(holder);
                    Thread.sleep(2);
                    c.delete().forPath(holder);
                } catch (KeeperException.NodeExistsException e) {
                    overlaps++;
                }
                l.close();
            }
            out(id + " churned " + overlaps);
        } catch (Exception e) {
            out(id + " error " + e);
        }
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
            try {
                switch (op) {
                    case "start": latches.put(id, start(id, f[2], true)); break;
                    case "close": latches.remove(id).close(); out(id + " closed"); break;
                    case "has": out(id + " has " + latches.get(id).hasLeadership()); break;
                    case "leader": out(id + " sees " + latches.get(id).getLeader().getId()); break;
                    case "participants": {
                        StringBuilder b = new StringBuilder(id + " participants");
                        for (Participant p : latches.get(id).getParticipants()) {
                            b.append(' ').append(p.getId()).append(p.isLeader() ? "*" : "");
                        }
                        out(b.toString());
                        break;
                    }
                    case "churn":
                        new Thread(() -> churn(id, f[2], Integer.parseInt(f[3]), f[4])).start();
                        break;
                    default: out(id + " error unknown op " + op);
                }
            } catch (Exception e) {
                out(id + " error " + e);
            }
        }
        for (LeaderLatch l : latches.values()) l.close();
        c.close();
    }
}
`

// StartLeaderLatch compiles the LeaderLatch peer (once per test binary)
// and starts it connected to servers; it is stopped when the test ends.
// It is driven one line at a time, "ID OP [ARGS]":
//
//	ID start PATH                   a new LeaderLatch(PATH, id ID), started; prints "ID leader" when it leads
//	ID close                        closes it; prints "ID closed"
//	ID has                          prints "ID has true" or "ID has false" (hasLeadership)
//	ID leader                       prints "ID sees LEADER-ID" (getLeader)
//	ID participants                 prints "ID participants P1* P2 ..." (getParticipants: their
//	                                ids in Curator's order, the leader's marked with *)
//	ID churn PATH ROUNDS HOLDER     in a thread of its own, ROUNDS times: a new latch, await
//	                                leadership, create the ephemeral node HOLDER, delete it,
//	                                close; prints "ID churned N" with N the creates that
//	                                failed because HOLDER existed (another leader held it)
//
// Errors print "ID error ...". It skips the test when javac or Curator's
// jars are missing, unless ZKIT_REQUIRE_ZOOKEEPER is set.
func StartLeaderLatch(t *testing.T, servers []string) *CuratorPeer {
	t.Helper()
	return StartJava(t, "LatchPeer", latchSource, servers)
}

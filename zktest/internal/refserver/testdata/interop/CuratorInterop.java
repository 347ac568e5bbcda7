// Exercises Curator 5.4 against a server given as args[0]; prints one line
// per check and "ok" at the end. Run by TestInteropCurator.

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;

public class CuratorInterop {
    public static void main(String[] args) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(args[0])
            .sessionTimeoutMs(10000).connectionTimeoutMs(10000).retryPolicy(new RetryOneTime(100)).build();
        c.start();
        if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new RuntimeException("not connected");
        }
        InterProcessMutex mutex = new InterProcessMutex(c, "/cur/lock");
        if (!mutex.acquire(10, TimeUnit.SECONDS)) {
            throw new RuntimeException("lock not acquired");
        }
        System.out.println("locked " + c.getChildren().forPath("/cur/lock").size());
        mutex.release();

        c.create().creatingParentContainersIfNeeded().withProtection()
            .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath("/cur/eph/n-", "d".getBytes());
        System.out.println("protected " + c.getChildren().forPath("/cur/eph").size());

        CountDownLatch created = new CountDownLatch(1);
        CuratorCache cache = CuratorCache.build(c, "/cur/cache");
        cache.listenable().addListener(CuratorCacheListener.builder()
            .forCreates(n -> { if (n.getPath().equals("/cur/cache/x")) created.countDown(); }).build());
        cache.start();
        c.create().creatingParentsIfNeeded().forPath("/cur/cache/x", "v".getBytes());
        if (!created.await(10, TimeUnit.SECONDS)) {
            throw new RuntimeException("cache saw no create");
        }
        System.out.println("cache create seen");
        cache.close();

        CuratorOp op1 = c.transactionOp().create().forPath("/cur/t1");
        CuratorOp op2 = c.transactionOp().check().withVersion(0).forPath("/cur/t1");
        System.out.println("transaction " + c.transaction().forOperations(op1, op2).size());

        SharedCount count = new SharedCount(c, "/cur/count", 0);
        count.start();
        count.trySetCount(count.getVersionedValue(), 7);
        System.out.println("shared count " + count.getCount());
        count.close();

        DistributedAtomicLong along = new DistributedAtomicLong(c, "/cur/along", new RetryOneTime(10));
        System.out.println("atomic long " + along.add(3L).postValue());

        DistributedDoubleBarrier barrier = new DistributedDoubleBarrier(c, "/cur/barrier", 1);
        barrier.enter(10, TimeUnit.SECONDS);
        barrier.leave(10, TimeUnit.SECONDS);
        System.out.println("barrier done");

        LeaderLatch latch = new LeaderLatch(c, "/cur/leader", "me");
        latch.start();
        if (!latch.await(10, TimeUnit.SECONDS)) {
            throw new RuntimeException("no leadership");
        }
        System.out.println("leader " + latch.getLeader().getId());
        latch.close();

        c.close();
        System.out.println("ok");
    }
}

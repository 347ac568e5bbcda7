# Exercises kazoo 2.8 against a server given as argv[1]; prints one line per
# check and "ok" at the end. Run by TestInteropKazoo.
import sys
import threading

from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

zk = KazooClient(hosts=sys.argv[1], timeout=10)
zk.start(timeout=10)
zk.ensure_path("/kz/a")
print("seq", zk.create("/kz/a/n-", b"x", ephemeral=True, sequence=True))

seen = threading.Event()


@zk.ChildrenWatch("/kz/a")
def watch(children):
    if len(children) == 2:
        seen.set()


zk.create("/kz/a/m", b"y")
assert seen.wait(10), "children watch did not fire"
print("children", sorted(zk.get_children("/kz/a")))

lock = zk.Lock("/kz/lock", "me")
with lock:
    print("lock contenders", lock.contenders())

t = zk.transaction()
t.create("/kz/t1", b"1")
t.check("/kz/a", 0)
t.set_data("/kz/a", b"z")
print("transaction", t.commit())
t = zk.transaction()
t.create("/kz/t2")
t.check("/kz/a", 99)
print("failed transaction", [type(r).__name__ for r in t.commit()])

data, stat = zk.get("/kz/a")
print("data", data, "version", stat.version, "children", stat.numChildren)

zk.add_auth("digest", "u:p")
zk.create("/kz/sec", b"s", acl=[make_digest_acl("u", "p", all=True)])
print("secret", zk.get("/kz/sec")[0], zk.get_acls("/kz/sec")[0][0].id.scheme)

counter = zk.Counter("/kz/counter")
counter += 5
counter -= 2
print("counter", counter.value)

barrier = zk.DoubleBarrier("/kz/barrier", 1)
barrier.enter()
barrier.leave()
print("barrier done")

election = zk.Election("/kz/election", "me")
won = []
election.run(lambda: won.append(True))
print("election", won)

zk.stop()
zk.close()
print("ok")

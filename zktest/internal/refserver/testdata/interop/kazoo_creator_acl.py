# What kazoo 2.8's test_create_makepath_incompatible_acls checks, against
# the servers in $ZK: a node created with CREATOR_ALL_ACL (kazoo
# sends its empty "auth" id as null) by a client with digest auth is
# closed to another client. Prints one line per check and "ok" at the end.
# Run by TestKazooCreatorACL on the reference server and on ZooKeeper.
import os
import uuid

from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import make_digest_acl_credential, CREATOR_ALL_ACL

root = "/kz-creator-" + uuid.uuid4().hex
owner = KazooClient(hosts=os.environ["ZK"] + root, timeout=10,
                    auth_data=[("digest", make_digest_acl_credential("username", "password"))])
owner.start(timeout=10)
other = KazooClient(hosts=os.environ["ZK"] + root, timeout=10)
other.start(timeout=10)
owner.ensure_path("/")
owner.create("/1/2", b"val2", makepath=True, acl=CREATOR_ALL_ACL)
print("created", owner.get_acls("/1/2")[0][0].id.scheme)
try:
    other.create("/1/2/3/4/5", b"val2", makepath=True)
    print("other created under it")
except NoAuthError:
    print("other refused")
owner.delete("/", recursive=True)
owner.stop()
other.stop()
print("ok")

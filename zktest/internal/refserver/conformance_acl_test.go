package refserver_test

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

func digestID(user, password string) string {
	sum := sha1.Sum([]byte(user + ":" + password))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

func acl(perms int32, scheme, id string) jute.ACL {
	return jute.ACL{Perms: perms, ID: jute.Id{Scheme: scheme, ID: id}}
}

// Scenarios on ACLs and authentication.
func init() {
	register(
		scenario{"acl-get-default", func(e *env) {
			a := e.session()
			a.getACL(e.base)
			a.getACL("/")
			a.getACL("/zookeeper")
			a.getACL("/zookeeper/config")
			a.getACL(e.p("/missing"))
		}},
		scenario{"acl-invalid", func(e *env) {
			a := e.session()
			for _, l := range [][]jute.ACL{
				nil,
				{},
				{acl(jute.PermAll, "world", "someone")},
				{acl(jute.PermAll, "nosuch", "x")},
				{acl(jute.PermAll, "digest", "nocolon")},
				{acl(jute.PermAll, "digest", "a:b:c")},
				{acl(jute.PermAll, "digest", "a:")},
				{acl(jute.PermAll, "ip", "300.1.1.1")},
				{acl(jute.PermAll, "ip", "10.0.0.0/33")},
				{acl(jute.PermAll, "auth", "")},
				{acl(jute.PermAll, "super", "")},
				{acl(jute.PermRead, "world", "anyone"), acl(jute.PermAll, "nosuch", "x")},
			} {
				a.createACL(e.p("/n"), l, 0)
			}
			a.exists(e.p("/n"), false)
		}},
		scenario{"acl-valid-forms", func(e *env) {
			a := e.session()
			a.createACL(e.p("/d"), []jute.ACL{acl(jute.PermAll, "digest", ":x"), acl(3, "digest", "u:p:")}, 0)
			a.getACL(e.p("/d"))
			a.createACL(e.p("/ip"), []jute.ACL{acl(jute.PermAll, "ip", "127.0.0.1"), acl(1, "ip", "10.0.0.0/8"), acl(2, "ip", "::1")}, 0)
			a.getACL(e.p("/ip"))
			a.createACL(e.p("/dup"), []jute.ACL{acl(1, "world", "anyone"), acl(1, "world", "anyone"), acl(3, "world", "anyone")}, 0)
			a.getACL(e.p("/dup"))
			a.createACL(e.p("/zero"), []jute.ACL{acl(0, "world", "anyone")}, 0)
			a.get(e.p("/zero"), false)
			a.exists(e.p("/zero"), false)
		}},
		scenario{"acl-read-denied", func(e *env) {
			a := e.session()
			a.createACL(e.p("/secret"), []jute.ACL{acl(jute.PermAll, "digest", digestID("u", "p"))}, 0)
			a.get(e.p("/secret"), false)
			a.get(e.p("/secret"), true)
			a.children(e.p("/secret"), false)
			a.children2(e.p("/secret"), false)
			a.exists(e.p("/secret"), false)
			a.getACL(e.p("/secret"))
			a.call(jute.OpCheck, &jute.CheckVersionRequest{Path: e.p("/secret"), Version: 5})
			a.call(jute.OpGetAllChildrenNumber, &jute.GetAllChildrenNumberRequest{Path: e.p("/secret")})
			a.set(e.p("/secret"), nil, -1)
		}},
		scenario{"acl-write-create-delete-admin", func(e *env) {
			a := e.session()
			a.createACL(e.p("/ro"), []jute.ACL{acl(jute.PermRead, "world", "anyone")}, 0)
			a.set(e.p("/ro"), []byte("x"), -1)
			a.create(e.p("/ro/child"), nil, 0)
			a.setACL(e.p("/ro"), openACL, -1)
			a.createACL(e.p("/nodel"), []jute.ACL{acl(jute.PermAll&^jute.PermDelete, "world", "anyone")}, 0)
			a.create(e.p("/nodel/c"), nil, 0)
			a.del(e.p("/nodel/c"), -1)
			a.del(e.p("/nodel/missing"), -1)
			a.del(e.p("/nodel"), -1)
			a.createACL(e.p("/wo"), []jute.ACL{acl(jute.PermWrite|jute.PermAdmin, "world", "anyone")}, 0)
			a.get(e.p("/wo"), false)
			a.getACL(e.p("/wo"))
			a.set(e.p("/wo"), []byte("y"), 0)
		}},
		scenario{"acl-digest-auth", func(e *env) {
			a := e.session()
			a.createACL(e.p("/s"), []jute.ACL{acl(jute.PermRead, "digest", digestID("u", "p")), acl(jute.PermAdmin, "digest", digestID("admin", "pw"))}, 0)
			a.getACL(e.p("/s"))
			a.addAuth("digest", "u:wrong")
			a.get(e.p("/s"), false)
			a.addAuth("digest", "u:p")
			a.get(e.p("/s"), false)
			a.getACL(e.p("/s"))
			a.addAuth("digest", "admin:pw")
			a.getACL(e.p("/s"))
			a.call(jute.OpWhoAmI, nil)
			a.addAuth("digest", "nocolon")
			a.call(jute.OpWhoAmI, nil)
		}},
		scenario{"acl-auth-scheme", func(e *env) {
			a := e.session()
			a.createACL(e.p("/n"), []jute.ACL{acl(jute.PermAll, "auth", "")}, 0)
			a.addAuth("digest", "u1:p1")
			a.addAuth("digest", "u2:p2")
			a.addAuth("digest", "u1:p1")
			a.createACL(e.p("/n"), []jute.ACL{acl(jute.PermAll, "auth", "ignored"), acl(jute.PermRead, "world", "anyone")}, 0)
			a.getACL(e.p("/n"))
			b := e.connect("b", 30*time.Second)
			b.getACL(e.p("/n"))
			b.set(e.p("/n"), nil, -1)
			b.addAuth("digest", "u2:p2")
			b.set(e.p("/n"), []byte("ok"), -1)
			a.setACL(e.p("/n"), []jute.ACL{acl(jute.PermRead, "auth", "")}, 0)
			a.getACL(e.p("/n"))
		}},
		scenario{"acl-ip", func(e *env) {
			a := e.session()
			a.createACL(e.p("/local"), []jute.ACL{acl(jute.PermAll, "ip", "127.0.0.1")}, 0)
			a.createACL(e.p("/net"), []jute.ACL{acl(jute.PermAll, "ip", "127.0.0.0/8")}, 0)
			a.createACL(e.p("/far"), []jute.ACL{acl(jute.PermAll, "ip", "10.1.2.3")}, 0)
			a.get(e.p("/local"), false)
			a.get(e.p("/net"), false)
			a.get(e.p("/far"), false)
			a.addAuth("ip", "whatever")
			a.get(e.p("/far"), false)
			a.call(jute.OpWhoAmI, nil)
		}},
		scenario{"acl-ip-forms", func(e *env) {
			// ZooKeeper parses each part with Integer.parseInt, which
			// takes a sign and any Unicode decimal digits.
			a := e.session()
			for i, id := range []string{"1.2.3.4.", ".1.2.3.4", "+1.2.3.4", "-0.2.3.4", "1.2.3.4/+8", "1.2.3.4/08",
				"1.2.3.4/", "1.2.3.4/8/9", "1.2.3", " 1.2.3.4", "127.0.0.1/-0",
				"\uff11\uff12\uff17.0.0.\uff11", "1.2.3.4/\uff18", "\u0661.\u0662.\u0663.\u0664", "\U0001D7CF.2.3.4", "\u00b9.2.3.4"} {
				a.createACL(e.p(fmt.Sprintf("/n%d", i)), []jute.ACL{acl(jute.PermAll, "ip", id)}, 0)
			}
			a.createACL(e.p("/local"), []jute.ACL{acl(jute.PermRead, "ip", "\uff11\uff12\uff17.0.0.\uff11/\uff13\uff12")}, 0)
			a.get(e.p("/local"), false)
			a.getACL(e.p("/local"))
		}},
		scenario{"acl-set-versions", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), nil, 0)
			a.setACL(e.p("/n"), []jute.ACL{acl(jute.PermAll, "world", "anyone")}, 1)
			a.setACL(e.p("/n"), []jute.ACL{acl(jute.PermRead|jute.PermAdmin, "world", "anyone")}, 0)
			a.setACL(e.p("/n"), openACL, 0)
			a.setACL(e.p("/n"), openACL, -1)
			a.setACL(e.p("/n"), nil, -1)
			a.setACL(e.p("/missing"), openACL, -1)
			a.setACL("bad", openACL, -1)
			a.getACL(e.p("/n"))
			a.exists(e.p("/n"), false)
		}},
		scenario{"auth-failed", func(e *env) {
			a := e.session()
			b := e.connect("b", 30*time.Second)
			b.addAuth("kerberos", "x")
			b.expectClosed()
			a.ping()
		}},
		scenario{"acl-digest-java-string", func(e *env) {
			// Auth data and ACL ids are Java Strings: the digest of
			// "u\xff:p" is that of "u\uFFFD:p", and ids and user names
			// come back re-encoded.
			a := e.session()
			a.createACL(e.p("/n"), []jute.ACL{acl(jute.PermAll, "digest", digestID("u\uFFFD", "p"))}, 0)
			a.createACL(e.p("/m"), []jute.ACL{acl(jute.PermRead, "digest", "v\xfe:x"), acl(jute.PermRead, "digest", "v\xff:x"),
				acl(jute.PermAll, "world", "anyone"), acl(jute.PermAll, "digest", "\U0001F600:y")}, 0)
			a.getACL(e.p("/m"))
			a.get(e.p("/n"), false)
			a.addAuth("digest", "u\xff:p")
			a.addAuth("digest", "\U0001F600:p")
			a.call(jute.OpWhoAmI, nil)
			a.get(e.p("/n"), false)
		}},
	)
}

package refserver_test

import (
	"fmt"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Scenarios on what ZooKeeper, in Java, reads from a request where Go's
// records cannot say it: null strings and buffers (length -1), which kazoo
// sends for an empty ACL id, and negative vector counts, which Java reads as
// an empty vector. Their bodies are written field by field with raw.

// null is a null string or buffer in raw.
type null struct{}

// raw encodes a request body field by field: int32, int64, bool, string,
// []byte (a buffer), null, rawBody (bytes as they are), or a []any of
// those.
func raw(fields ...any) rawBody {
	e := jute.NewEncoder(nil)
	var put func(f any)
	put = func(f any) {
		switch v := f.(type) {
		case int32:
			e.Int32(v)
		case int64:
			e.Int64(v)
		case bool:
			e.Bool(v)
		case string:
			e.String(v)
		case []byte:
			e.Buffer(v)
		case null:
			e.Int32(-1)
		case rawBody:
			e.Raw([]byte(v))
		case []any:
			for _, x := range v {
				put(x)
			}
		default:
			panic(fmt.Sprintf("raw: cannot encode %T", f))
		}
	}
	for _, f := range fields {
		put(f)
	}
	return rawBody(e.Bytes())
}

// rawACL is a vector of ACL entries (perms, scheme, id), each string a
// string or null.
func rawACL(entries ...[3]any) []any {
	out := []any{int32(len(entries))}
	for _, a := range entries {
		out = append(out, a[0], a[1], a[2])
	}
	return out
}

// rawCreate is a CreateRequest body: path, null data, acl, flags.
func rawCreate(path any, acl []any, flags int32) rawBody {
	return raw(path, null{}, acl, flags)
}

// rawMulti is a multi body of create ops.
func rawMulti(ops ...rawBody) rawBody {
	var typed []any
	for _, op := range ops {
		typed = append(typed, jute.OpCreate2, op)
	}
	return rawMultiOf(typed...)
}

// rawMultiOf is a multi body of (opcode, body) pairs.
func rawMultiOf(ops ...any) rawBody {
	var fields []any
	for i := 0; i < len(ops); i += 2 {
		fields = append(fields, ops[i].(int32), false, int32(-1), ops[i+1].(rawBody))
	}
	return raw(append(fields, int32(-1), true, int32(-1))...)
}

func init() {
	register(
		scenario{"acl-null-id", func(e *env) {
			// A null id is fine for "auth" (the id is not read),
			// InvalidACL for schemes without a provider, and a
			// NullPointerException (MarshallingError) where the id is
			// read: world, digest, ip.
			a := e.session()
			for i, scheme := range []any{"auth", "x509", "nosuch", "world", "digest", "ip", "super", null{}} {
				a.call(jute.OpCreate2, rawCreate(e.p(fmt.Sprintf("/n%d", i)), rawACL([3]any{int32(31), scheme, null{}}), 0))
			}
			a.addAuth("digest", "u:p")
			a.call(jute.OpCreate2, rawCreate(e.p("/auth"), rawACL([3]any{int32(31), "auth", null{}}), 0))
			a.getACL(e.p("/auth"))
			a.call(jute.OpCreate2, rawCreate(e.p("/scheme"), rawACL([3]any{int32(31), null{}, "anyone"}), 0))
			// Duplicates are removed with Java's equals, which fails on
			// a null it is called on.
			a.call(jute.OpCreate2, rawCreate(e.p("/d1"), rawACL([3]any{int32(31), "world", "anyone"}, [3]any{int32(31), null{}, "x"}), 0))
			a.call(jute.OpCreate2, rawCreate(e.p("/d2"), rawACL([3]any{int32(31), "auth", ""}, [3]any{int32(31), "auth", null{}}), 0))
			a.call(jute.OpCreate2, rawCreate(e.p("/d3"), rawACL([3]any{int32(31), "auth", null{}}, [3]any{int32(31), "auth", ""}), 0))
			a.getACL(e.p("/d3"))
			a.call(jute.OpCreate2, rawCreate(e.p("/d4"), rawACL([3]any{int32(1), "auth", null{}}, [3]any{int32(31), "auth", null{}}), 0))
			a.getACL(e.p("/d4"))
			a.call(jute.OpCreate2, rawCreate(e.p("/d5"), rawACL([3]any{int32(31), "world", "anyone"}, [3]any{int32(31), "world", null{}}), 0))
			// setACL reads its ACL the same way.
			a.call(jute.OpSetACL, raw(e.p("/auth"), rawACL([3]any{int32(31), "auth", null{}}), int32(-1)))
			a.call(jute.OpSetACL, raw(e.p("/auth"), rawACL([3]any{int32(31), "nosuch", null{}}), int32(-1)))
			a.call(jute.OpSetACL, raw(e.p("/auth"), rawACL([3]any{int32(31), "ip", null{}}), int32(-1)))
			a.getACL(e.p("/auth"))
			// A null path: create fails reading it, after the flags are
			// checked; setACL validates it first.
			a.call(jute.OpCreate2, rawCreate(null{}, rawACL([3]any{int32(31), "world", "anyone"}), 0))
			a.call(jute.OpCreate2, rawCreate(null{}, rawACL([3]any{int32(31), "world", "anyone"}), 99))
			a.call(jute.OpSetACL, raw(null{}, rawACL([3]any{int32(31), "auth", null{}}), int32(-1)))
			// In a multi, an InvalidACL fails its op; an exception fails
			// the whole request.
			a.call(jute.OpMulti, rawMulti(rawCreate(e.p("/m1"), rawACL([3]any{int32(31), "auth", null{}}), 0)))
			a.call(jute.OpMulti, rawMulti(rawCreate(e.p("/m2"), rawACL([3]any{int32(31), "world", "anyone"}), 0),
				rawCreate(e.p("/m3"), rawACL([3]any{int32(31), "nosuch", null{}}), 0)))
			a.call(jute.OpMulti, rawMulti(rawCreate(e.p("/m4"), rawACL([3]any{int32(31), "world", null{}}), 0)))
			a.call(jute.OpMulti, rawMulti(rawCreate(null{}, rawACL([3]any{int32(31), "world", "anyone"}), 0)))
			a.children(e.base, false)
		}},
		scenario{"multi-null-paths", func(e *env) {
			// ZooKeeper reads every op's path before it takes the
			// multi's zxid: a null one fails the request without one.
			a := e.session()
			a.create(e.p("/n"), nil, 0)
			for _, op := range []struct {
				code int32
				body rawBody
			}{
				{jute.OpDelete, raw(null{}, int32(-1))},
				{jute.OpSetData, raw(null{}, null{}, int32(-1))},
				{jute.OpCheck, raw(null{}, int32(-1))},
				{jute.OpCreate, rawCreate(null{}, rawACL([3]any{int32(31), "world", "anyone"}), 0)},
			} {
				a.call(jute.OpMulti, rawMultiOf(jute.OpSetData, raw(e.p("/n"), []byte("x"), int32(-1)), op.code, op.body))
			}
			a.call(jute.OpMulti, rawMultiOf(jute.OpSetData, raw(e.p("/n"), null{}, int32(-1))))
			a.get(e.p("/n"), false)
		}},
		scenario{"acl-negative-count", func(e *env) {
			// Java reads a negative vector count as an empty vector (-1
			// is null): an empty ACL is InvalidACL.
			a := e.session()
			for _, n := range []int32{-1, -2, -5, -1 << 31, 0} {
				a.call(jute.OpCreate2, raw(e.p("/n"), null{}, n, int32(0)))
			}
			a.call(jute.OpCreateTTL, raw(e.p("/t"), null{}, int32(-3), int32(jute.FlagPersistentWithTTL), int64(1000)))
			a.create(e.p("/n"), nil, 0)
			a.call(jute.OpSetACL, raw(e.p("/n"), int32(-2), int32(-1)))
			a.call(jute.OpMulti, rawMulti(raw(e.p("/m"), null{}, int32(-7), int32(0))))
			a.call(jute.OpSetWatches, raw(int64(0), int32(-2), int32(-3), int32(-1<<31)))
			a.call(jute.OpSetWatches2, raw(int64(0), int32(-2), int32(-3), int32(-4), int32(-5), int32(-6)))
			a.call(jute.OpCreate2, raw(e.p("/big"), null{}, int32(1<<31-1), int32(0)))
			a.getACL(e.p("/n"))
			a.children(e.base, false)
		}},
		scenario{"auth-null-credential", func(e *env) {
			// ZooKeeper's digest provider fails on a null credential:
			// AuthFailed, and the connection closes. The ip provider
			// does not read it.
			a := e.session()
			b := e.connect("b", 30*time.Second)
			b.call(jute.OpAuth, raw(int32(0), "digest", null{}))
			b.expectClosed()
			c := e.connect("c", 30*time.Second)
			c.call(jute.OpAuth, raw(int32(0), "ip", null{}))
			c.call(jute.OpAuth, raw(int32(0), "digest", []byte{}))
			c.call(jute.OpWhoAmI, nil)
			d := e.connect("d", 30*time.Second)
			d.call(jute.OpAuth, raw(int32(0), null{}, []byte("u:p")))
			d.expectClosed()
			a.ping()
		}},
	)
}

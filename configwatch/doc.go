// Package configwatch publishes and follows a configuration made of
// several znodes, and never lets a reader see half of a publish: the
// paper's "ready" znode protocol (§2.1), plus an atomic mode.
//
// A Config is a handle on the configuration at one path, typed by its
// decoder; New does no I/O, and every method takes a context:
//
//	type AppConfig struct {
//		Workers int    `json:"workers"`
//		DB      string `json:"db"`
//	}
//	cfg := configwatch.New(c, "/app/config", configwatch.JSON[AppConfig]) // *Config[AppConfig]
//
//	zxid, err := cfg.Set(ctx, configwatch.Values{"workers": []byte("8")}) // or Publish: replace all keys
//	snap, err := cfg.Get(ctx)                                              // Snapshot[AppConfig]
//	for snap := range cfg.Watch(ctx).Values() {
//		if snap.Err == nil {
//			apply(snap.Value) // complete, never mixed; the last one is the current config
//		}
//	}
//
// configwatch.New(c, path, configwatch.Raw, configwatch.WithAtomic()) is
// a *Config[Values] that reads the values as stored and publishes in one
// transaction. Options: WithAtomic, WithACL, WithLogger.
//
// Every error names the path, once. Input the methods can check (the
// path, the keys, the size of each value, the decoder) is refused with an
// *client.InputError before anything is sent; a closed client's calls
// fail with an error matching client.ErrClosed; Get of a configuration
// never published returns ErrNoConfig (its node does not exist; while a
// first flag publish is in progress, or after one failed midway, Get
// waits for a publish to complete, as it does for every other).
//
// A configuration holds nothing on a session: its nodes are persistent.
// When a session is lost, a publish writes on under the next one (every
// write is idempotent), Get reads again, and Watch reads again and goes on.
//
// # Layout
//
// One node per key, and a flag:
//
//	<path>           the configuration node (its data is not used)
//	<path>/<key>     PERSISTENT, data = the key's value, one JSON value
//	<path>/ready     PERSISTENT, exists when the keys form a complete configuration
//
// The JSON decoder reads the keys as the members of one JSON object, so
// a struct with json tags (or a map) decodes the whole configuration, and
// "zkit config PATH set workers=8 db=primary" writes what it reads (a
// value that is not valid JSON is stored, and read, as a string). Keys are
// node names: no "/", and "ready" is taken. Every snapshot carries the
// zxid of the publish it reflects (ready's mzxid), the same for every
// reader, comparable with client.LastZxid and usable with
// client.CatchUp for read-your-writes across processes.
//
// A key, and ready, is a persistent node without children. A child of the
// configuration node that is ephemeral or has children belongs to another
// recipe (a lock's or a member's node, a semaphore's directory): Set,
// Publish, Get and Watch then refuse the path with an error matching
// recipes.ErrOtherRecipe (a publish before it writes anything; it looks
// at the children it writes or deletes, and at every child only while the
// path has no ready yet, so that its cost follows what it writes), so that a
// configuration put on another recipe's path by mistake neither deletes
// nor overwrites that recipe's nodes, nor waits for a publish that never
// comes.
//
// # Publishing
//
// With the ready flag (the default, and the only way for a configuration
// too large for one request), a publisher deletes ready, writes the keys,
// and creates ready. Publishers must take turns (a leader, or a lock):
// two flag publishes that overlap can expose a mix of both. A flag publish
// that fails midway is not undone: the keys it wrote wait, behind the
// missing ready, for the next publish to complete, so repeat it (or
// Publish every key) before publishing anything else.
//
// With WithAtomic, a publisher writes the keys and sets ready's data
// (creating ready if needed) in one multi. The flag never goes down,
// readers never wait, and concurrent atomic publishers each apply whole.
//
// Java or Python services publish compatibly with the same steps:
//
//	// Curator, ready flag
//	client.delete().quietly().forPath(path + "/ready");
//	client.create().orSetData().forPath(path + "/workers", "8".getBytes(UTF_8));
//	client.create().forPath(path + "/ready", new byte[0]);
//
//	# kazoo, atomic
//	t = zk.transaction()
//	t.set_data(path + "/workers", b"8")
//	t.set_data(path + "/ready", b"")
//	t.commit()
//
// Values are JSON (a quoted string for text). Readers in other languages
// follow the reading rule below.
//
// # Reading
//
// A reader reads ready's Stat (with a watch), lists the keys, reads them
// (in parallel), and reads ready's Stat again. It accepts the keys only if
// ready existed both times with the same czxid and the same version;
// otherwise a publish overlapped its read, and it reads again. While
// ready is missing it waits for its creation.
//
// Why an unchanged ready proves the keys consistent: the reads go, in
// order, to one server, which applies transactions in zxid order; so all
// of them see states between the first look at ready and the last one. A
// flag publisher writes keys only while ready does not exist; if ready
// was deleted and created again in between, its czxid changed. An atomic
// publish sets ready in the same transaction as its keys; if one was
// applied in between, ready's version changed. Neither changed, so no
// key was written in between, and every key was read as it stood at the
// first look: in the complete configuration that ready (created or set
// last by its publish) marks.
//
// Watch is built on recipes.Follow: level-triggered, it reads again after
// every change of ready, reconnect and new session, and delivers a
// snapshot only when its zxid differs from the last one delivered. After
// a burst of publishes or a partition, the last snapshot it delivers is
// the current configuration.
package configwatch

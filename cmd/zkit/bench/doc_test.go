// Package bench holds zkit's recipe benchmarks. They run only with -bench:
//
//	ZKIT_BENCH_SERVERS=127.0.0.1:2381 go test ./bench -run '^$' -bench Lock -benchtime 10s
//	ZKIT_BENCH_SERVERS=127.0.0.1:2381 go test ./bench -run '^$' -bench Counter -benchtime 10000x
//	ZKIT_BENCH_SERVERS=127.0.0.1:2381 go test ./bench -run '^$' -bench ElectionCrash -benchtime 10x
//
// ZKIT_BENCH_SERVERS names the ensemble to measure against (to compare with
// the anchors in bench/anchors, start it with their start-zk.sh and run
// them against the same server). Without it the benchmarks use zktest's
// shared real ZooKeeper, which runs with forceSync=no: fine for a quick
// look, not comparable with the anchors.
//
// Each point reports handoffs/s, the p50 and p99 latency of acquiring, and
// the server packets per handoff (the change in the servers' mntr
// zk_packets_received and zk_packets_sent, divided by the handoffs), and
// the CPU used by this process and, when $ZKIT_BENCH_PIDS lists the server
// PIDs, by the servers (100% is one core).
//
// BenchmarkElection (W5) counts failovers: its p50 and p99 run from a
// leader's step-down to the next leader's term. BenchmarkElectionCrash
// times the failover after the leader crashes instead: its session expired
// on the server, or its connection silent until the session times out
// (x-timeout: the p50 as a multiple of the session timeout).
//
// BenchmarkCache (W7) follows a tree of 10 000 nodes with a tree cache: it
// reports the load time (load-ms), the servers' watches (wchs), and per op
// the time from a setData to the cache's changed event (p50, p99).
//
// BenchmarkMembership measures a group instead: 1000 joins from 10
// sessions while 10 watchers follow the group; it reports the time until
// every watcher holds all 1000 members (ms/converge), joins/s, and the
// server packets per join, the watchers' traffic included.
package bench

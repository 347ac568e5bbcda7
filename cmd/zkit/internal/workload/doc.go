// Package workload is zkit's benchmark workloads: W1–W5 as defined by the
// anchor benchmarks that Curator, kazoo and go-zookeeper were measured
// with (bench/anchors/README.md), so that zkit's figures and theirs are
// taken the same way, print the same lines, and can be compared as ratios
// in one run.
//
// A workload is a Spec: how to set up C clients against a server and what
// one client's operation is. Run drives it: every client loops while now <
// start+Duration (an operation started before the deadline is counted when
// it completes), or until an operation budget is spent (go test -bench's
// b.N), and the server's own mntr counters give the packets per operation,
// the honest measure of protocol cost.
//
// The baselines (gozk.go) talk to go-zookeeper directly: they are what
// zkit is measured against, so they must be the raw library, not zkit's
// client. They are the only code outside package client that imports it.
package workload

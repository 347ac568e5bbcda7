// Package refserver is zkit's reference ZooKeeper server: an in-process
// server that speaks ZooKeeper's jute wire protocol and, for everything a
// client can observe, behaves like a standalone Apache ZooKeeper 3.8.
package refserver

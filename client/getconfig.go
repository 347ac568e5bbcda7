package client

import "context"

// ConfigNode is where ZooKeeper keeps the ensemble's dynamic configuration
// (ZooKeeper 3.5 and later). It lies outside any namespace: GetConfig and
// GetConfigW read it there.
const ConfigNode = "/zookeeper/config"

// GetConfig returns the ensemble's configuration as the server keeps it in
// ConfigNode ("server.1=host:2888:3888:participant;2181" lines and a
// "version=" line; empty on a standalone server without dynamic
// reconfiguration), with the node's Stat.
func (c *Client) GetConfig(ctx context.Context) ([]byte, *Stat, error) {
	return c.get(ctx, request{"getConfig", ConfigNode, false}, ConfigNode)
}

// GetConfigW is GetConfig plus a one-shot watch that fires when the
// configuration changes (a reconfiguration). The event's Path is
// ConfigNode.
func (c *Client) GetConfigW(ctx context.Context) ([]byte, *Stat, <-chan WatchEvent, error) {
	return c.getW(ctx, request{"getConfig", ConfigNode, false}, ConfigNode)
}

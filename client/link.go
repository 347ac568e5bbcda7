package client

// link is one connection's gate for calls: lost is closed once the
// connection is lost and the wire client has settled the calls sent on it
// (their replies delivered or their errors given). See do.
type link struct {
	lost chan struct{}
}

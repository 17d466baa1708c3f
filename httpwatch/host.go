package httpwatch

// Server is the URL of the API server rc reads, without any user
// information: what a cache of rc's objects may be keyed by (see package
// snapshot).
func (rc *ResourceClient) Server() string {
	u := *rc.c.host
	u.User = nil
	return u.String()
}

// Client returns the client rc sends its requests through: what tells
// apart two caches of one server in one process (two replicas in a test).
func (rc *ResourceClient) Client() *Client { return rc.c }

package httpwatch

// Server is the URL of the API server rc reads, without any user
// information: what a cache of rc's objects may be keyed by (see package
// snapshot).
func (rc *ResourceClient) Server() string {
	u := *rc.c.host
	u.User = nil
	return u.String()
}

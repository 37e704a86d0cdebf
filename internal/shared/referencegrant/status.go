package referencegrant

// Err says why the ReferenceGrant cache cannot be used now, wrapping
// optionalapi.ErrNotServed, ErrForbidden or ErrNotSynced, or returns nil
// once it can. Check gives the same reason in its Unavailable decisions;
// Err is for callers that report the cache's state itself (a readiness
// endpoint) or must tell a cache still syncing from one that cannot be
// read.
func (c *Checker) Err() error {
	_, _, err := c.api.Informer()
	return err
}

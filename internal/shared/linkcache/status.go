package linkcache

// Err says why the VolumeSnapshotLink cache cannot be read now, wrapping
// optionalapi.ErrNotServed, ErrForbidden or ErrNotSynced, or returns nil
// once it can: the error GetLink returns meanwhile, for callers that report
// the cache's state itself or must tell a cache still syncing from one that
// cannot be read.
func (c *Cache) Err() error {
	_, _, err := c.api.Informer()
	return err
}

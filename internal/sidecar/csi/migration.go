package csi

import (
	"context"
	"strconv"

	"github.com/kubernetes-csi/csi-lib-utils/connection"
)

// WithMigrated marks the CSI calls made with the returned context as calls
// for a migrated in-tree volume (or not), as upstream does: a connection
// whose metrics manager has csi-lib-utils' "migrated" label
// (metrics.WithMigration) records the calls with it; other connections
// ignore the mark.
func WithMigrated(ctx context.Context, migrated bool) context.Context {
	return context.WithValue(ctx, connection.AdditionalInfoKey, connection.AdditionalInfo{Migrated: strconv.FormatBool(migrated)})
}

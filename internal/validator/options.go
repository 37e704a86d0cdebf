package validator

import (
	"errors"

	"github.com/xns-csi/csi-provisioner/internal/shared/controllerflags"
)

// Options are the validator's command-line settings: the upstream
// volume-data-source-validator's flags, under its names and defaults, plus
// those that say how the sidecars whose decisions it reports are set
// (--feature-gates, --cross-namespace-snapshot) and the client's rate
// limit. See AddFlags.
type Options struct {
	// Common are the flags the project's controllers share: in
	// FeatureGate, CrossNamespaceSourceProvisioning says whether the
	// sidecars provision from other namespaces at all.
	controllerflags.Common

	// CrossNamespaceSnapshot is --cross-namespace-snapshot: claims naming a
	// VolumeSnapshotLink are decided as the sidecars with that flag decide
	// them (the link, its snapshot's namespace and grant), rather than as
	// a populator's kind.
	CrossNamespaceSnapshot bool
}

// NewOptions returns the defaults, which are the flags' defaults.
func NewOptions() *Options {
	return &Options{Common: controllerflags.New(10)}
}

// Validate checks the options. It changes nothing; ApplyLogging does.
func (o *Options) Validate() error {
	return errors.Join(o.Common.Validate()...)
}

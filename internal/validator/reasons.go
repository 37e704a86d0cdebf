package validator

// The event reasons of the validator's own; every other reason it gives is
// a claimsource.Reason, with the sidecar's words. docs/validator.md's event table
// lists them with what the user should do.
const (
	// ReasonUnrecognizedDataSourceKind: no VolumePopulator registers the
	// group and kind the claim's dataSourceRef names (upstream's reason).
	ReasonUnrecognizedDataSourceKind = "UnrecognizedDataSourceKind"
	// ReasonInvalidDataSource: the claim's data source fields cannot be
	// resolved into one source (datasource.Resolve), e.g. an apiGroup with a
	// version in it; the sidecar fails such a claim with the same message.
	ReasonInvalidDataSource = "InvalidDataSource"
)

// Why a claim gets no event, or none yet: for logs, never events.
const (
	quietBound      = "Bound"
	quietAllowed    = "Allowed"
	quietRegistered = "PopulatorRegistered"

	waitPopulators = "VolumePopulatorsUnavailable"
	waitGrants     = "ReferenceGrantsNotSynced"
	waitLinks      = "VolumeSnapshotLinksNotSynced"
)

package transfer

// The reasons of the events the controller emits itself; the others are
// the conditions' reasons of packages plan and match (docs/transfer.md,
// "Events", lists them all with what to do).
const (
	// ReasonTokenSet: the request got its token (Normal, on the request).
	ReasonTokenSet = "TokenSet"
	// ReasonStepFailed: a step's API call failed; it is retried (Warning).
	ReasonStepFailed = "StepFailed"
	// ReasonTransferRetired: a completed transfer's request and accept are
	// being deleted (Normal, on both).
	ReasonTransferRetired = "TransferRetired"
	// ReasonLockCollected: the lock of a request that no longer exists
	// was removed from its source (Normal, on the claim or snapshot).
	ReasonLockCollected = "LockCollected"
)

// Package transfer is the wiring of cmd/storage-transfer-controller: the
// controller that carries out seed 002's namespace transfers of
// VolumeSnapshots and PersistentVolumeClaims (StorageTransferRequest and
// StorageTransferAccept, transfer.xns-csi.io). It gathers what it needs
// from informer caches, lets the pure packages decide (match: which accept
// takes a request; plan: which step comes next), writes the write-ahead
// record before every step that changes an object, takes the step, and
// reports conditions and events. docs/transfer.md lists the steps.
package transfer

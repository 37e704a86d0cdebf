// Package snapshotwebhook is the snapshot validation webhook's wiring
// (cmd/snapshot-validation-webhook): its flags, the HTTPS server that
// kube-apiserver calls with admission.k8s.io/v1 AdmissionReviews, the
// caches of snapshot classes the default-class rule reads, and the
// metrics. The rules themselves are internal/snapshotwebhook/snapshotvalidation's pure
// functions; this package decodes the requests, gathers what the rules
// need and turns their errors into admission responses.
//
// The webhook fails open where it cannot decide: an object it cannot
// decode, a resource it does not know and a class cache that has not
// synced are allowed and counted, never denied (seed 004: the webhook must
// never prevent a no-op update). A request it cannot even read as an
// AdmissionReview gets an HTTP error, which kube-apiserver handles with
// the webhook's failurePolicy.
package snapshotwebhook

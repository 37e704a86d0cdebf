package csi

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// IsFinal reports whether err from a CSI call means the operation is over in
// the driver: it either succeeded (err is nil) or failed and is certainly not
// in progress. When IsFinal returns false the driver may still be working on
// the request (or may even have finished it without the answer reaching us),
// so the caller must retry with the same request and must not forget the
// volume; CSI calls are idempotent, so the retry returns the volume once it
// exists.
//
// Not final:
//   - context.Canceled and context.DeadlineExceeded, and the gRPC codes
//     Canceled and DeadlineExceeded: we stopped waiting, the driver did not
//     necessarily stop working;
//   - Unavailable: the connection broke or the driver is restarting;
//   - ResourceExhausted: the driver is temporarily out of resources;
//   - Aborted: CSI's "an operation is already pending for this volume";
//   - any error that does not carry a gRPC status: it came from the client
//     side (e.g. the connection), and we cannot know whether the request
//     reached the driver.
//
// Every other gRPC code is final. This mirrors the upstream csi-provisioner's
// isFinalError, which exists so that a timed-out CreateVolume never leaks a
// volume. Wrapped errors are unwrapped.
func IsFinal(err error) bool {
	if err == nil {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	switch st.Code() {
	case codes.Canceled,
		codes.DeadlineExceeded,
		codes.Unavailable,
		codes.ResourceExhausted,
		codes.Aborted:
		return false
	default:
		return true
	}
}

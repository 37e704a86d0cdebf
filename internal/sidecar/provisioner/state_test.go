package provisioner

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

func TestCreateState(t *testing.T) {
	grpcErr := func(c codes.Code) error { return status.Error(c, "CreateVolume failed") }
	tests := []struct {
		name          string
		err           error
		mayReschedule bool
		want          controller.ProvisioningState
	}{
		{name: "a timed-out call may still create the volume", err: grpcErr(codes.DeadlineExceeded),
			want: controller.ProvisioningInBackground},
		{name: "a timed-out call is not rescheduled: the volume may exist on the selected node",
			err: grpcErr(codes.DeadlineExceeded), mayReschedule: true, want: controller.ProvisioningInBackground},
		{name: "an unavailable driver may still create the volume", err: grpcErr(codes.Unavailable),
			want: controller.ProvisioningInBackground},
		{name: "a canceled call may still create the volume", err: grpcErr(codes.Canceled),
			want: controller.ProvisioningInBackground},
		{name: "an operation already pending in the driver is retried", err: grpcErr(codes.Aborted),
			want: controller.ProvisioningInBackground},
		{name: "the caller's own deadline may still create the volume", err: fmt.Errorf("CreateVolume: %w", context.DeadlineExceeded),
			want: controller.ProvisioningInBackground},
		{name: "an error without gRPC status may still create the volume", err: errors.New("connection reset"),
			want: controller.ProvisioningInBackground},
		{name: "an invalid argument ends the attempt", err: grpcErr(codes.InvalidArgument),
			want: controller.ProvisioningFinished},
		{name: "an invalid argument ends the attempt even when it may be rescheduled",
			err: grpcErr(codes.InvalidArgument), mayReschedule: true, want: controller.ProvisioningFinished},
		{name: "a missing source ends the attempt", err: grpcErr(codes.NotFound),
			want: controller.ProvisioningFinished},
		{name: "a driver-internal error ends the attempt", err: grpcErr(codes.Internal),
			want: controller.ProvisioningFinished},
		{name: "exhausted resources on the selected node go back to the scheduler",
			err: grpcErr(codes.ResourceExhausted), mayReschedule: true, want: controller.ProvisioningReschedule},
		{name: "exhausted resources without a node to reschedule are retried",
			err: grpcErr(codes.ResourceExhausted), want: controller.ProvisioningInBackground},
		{name: "a wrapped ResourceExhausted still goes back to the scheduler",
			err: fmt.Errorf("CreateVolume pvc-1: %w", grpcErr(codes.ResourceExhausted)), mayReschedule: true,
			want: controller.ProvisioningReschedule},
		{name: "a wrapped invalid argument still ends the attempt",
			err: fmt.Errorf("CreateVolume pvc-1: %w", grpcErr(codes.InvalidArgument)), want: controller.ProvisioningFinished},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := createState(tt.err, tt.mayReschedule); got != tt.want {
				t.Errorf("createState(%v, mayReschedule=%v) = %q, want %q", tt.err, tt.mayReschedule, got, tt.want)
			}
		})
	}
}

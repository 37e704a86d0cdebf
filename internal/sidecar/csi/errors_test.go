package csi

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestIsFinal(t *testing.T) {
	tests := map[string]struct {
		err  error
		want bool
	}{
		"no error is final": {err: nil, want: true},
		"context deadline exceeded may still be in progress":        {err: context.DeadlineExceeded, want: false},
		"context canceled may still be in progress":                 {err: context.Canceled, want: false},
		"wrapped context deadline may still be in progress":         {err: fmt.Errorf("create: %w", context.DeadlineExceeded), want: false},
		"gRPC Canceled may still be in progress":                    {err: status.Error(codes.Canceled, "x"), want: false},
		"gRPC DeadlineExceeded may still be in progress":            {err: status.Error(codes.DeadlineExceeded, "x"), want: false},
		"gRPC Unavailable may still be in progress":                 {err: status.Error(codes.Unavailable, "x"), want: false},
		"gRPC ResourceExhausted may still be in progress":           {err: status.Error(codes.ResourceExhausted, "x"), want: false},
		"gRPC Aborted (operation pending) may still be in progress": {err: status.Error(codes.Aborted, "x"), want: false},
		"wrapped gRPC DeadlineExceeded may still be in progress":    {err: fmt.Errorf("create: %w", status.Error(codes.DeadlineExceeded, "x")), want: false},
		"error without a gRPC status may still be in progress":      {err: errors.New("connection reset"), want: false},
		"gRPC InvalidArgument is final":                             {err: status.Error(codes.InvalidArgument, "x"), want: true},
		"gRPC NotFound is final":                                    {err: status.Error(codes.NotFound, "x"), want: true},
		"gRPC OutOfRange is final":                                  {err: status.Error(codes.OutOfRange, "x"), want: true},
		"gRPC AlreadyExists is final":                               {err: status.Error(codes.AlreadyExists, "x"), want: true},
		"gRPC Internal is final":                                    {err: status.Error(codes.Internal, "x"), want: true},
		"gRPC Unknown is final":                                     {err: status.Error(codes.Unknown, "x"), want: true},
		"gRPC Unimplemented is final":                               {err: status.Error(codes.Unimplemented, "x"), want: true},
		"wrapped gRPC InvalidArgument is final":                     {err: fmt.Errorf("create: %w", status.Error(codes.InvalidArgument, "x")), want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := IsFinal(tc.err); got != tc.want {
				t.Errorf("IsFinal(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

package csi

import (
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/xns-csi/csi-provisioner/test/csitest"
)

func TestCapabilities(t *testing.T) {
	tests := map[string]struct {
		opts []csitest.Option
		want Capabilities
	}{
		"default driver has a controller service that creates, snapshots and clones": {
			want: Capabilities{
				ControllerService:    true,
				CreateDeleteVolume:   true,
				CreateDeleteSnapshot: true,
				CloneVolume:          true,
			},
		},
		"driver with accessibility constraints reports them": {
			opts: []csitest.Option{csitest.WithAccessibilityConstraints(true)},
			want: Capabilities{
				ControllerService:        true,
				AccessibilityConstraints: true,
				CreateDeleteVolume:       true,
				CreateDeleteSnapshot:     true,
				CloneVolume:              true,
			},
		},
		"every controller capability maps to its own field": {
			opts: []csitest.Option{csitest.WithCapabilities(
				csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
				csi.ControllerServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER,
				csi.ControllerServiceCapability_RPC_GET_CAPACITY,
				csi.ControllerServiceCapability_RPC_MODIFY_VOLUME,
				csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME,
				csi.ControllerServiceCapability_RPC_LIST_VOLUMES,
			)},
			want: Capabilities{
				ControllerService:      true,
				CreateDeleteVolume:     true,
				SingleNodeMultiWriter:  true,
				GetCapacity:            true,
				ModifyVolume:           true,
				PublishUnpublishVolume: true,
			},
		},
		"driver without controller capabilities reports only the controller service": {
			opts: []csitest.Option{csitest.WithCapabilities()},
			want: Capabilities{ControllerService: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, client, _ := connectTo(t, testTimeout, tc.opts...)
			got, err := client.Capabilities(ctx)
			if err != nil {
				t.Fatalf("Capabilities: %v", err)
			}
			if got != tc.want {
				t.Errorf("Capabilities = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCapabilitiesSupports(t *testing.T) {
	tests := map[string]struct {
		caps            Capabilities
		snapshotRestore bool
		clone           bool
	}{
		"create, snapshot and clone support restore and clone": {
			caps:            Capabilities{CreateDeleteVolume: true, CreateDeleteSnapshot: true, CloneVolume: true},
			snapshotRestore: true, clone: true,
		},
		"create without snapshots cannot restore from a snapshot": {
			caps:  Capabilities{CreateDeleteVolume: true, CloneVolume: true},
			clone: true,
		},
		"create without clone cannot clone": {
			caps:            Capabilities{CreateDeleteVolume: true, CreateDeleteSnapshot: true},
			snapshotRestore: true,
		},
		"snapshot and clone without create support neither": {
			caps: Capabilities{CreateDeleteSnapshot: true, CloneVolume: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.caps.SupportsSnapshotRestore(); got != tc.snapshotRestore {
				t.Errorf("SupportsSnapshotRestore() = %v, want %v", got, tc.snapshotRestore)
			}
			if got := tc.caps.SupportsClone(); got != tc.clone {
				t.Errorf("SupportsClone() = %v, want %v", got, tc.clone)
			}
		})
	}
}

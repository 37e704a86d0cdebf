package provisioner

import (
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
)

func fromSnapshot(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
		Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: id}}}
}

func fromVolume(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{
		Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: id}}}
}

func TestConfirmsSource(t *testing.T) {
	tests := []struct {
		name      string
		requested *csi.VolumeContentSource
		got       *csi.VolumeContentSource
		want      bool
	}{
		{name: "an empty volume needs no confirmation", requested: nil, got: nil, want: true},
		{name: "an empty volume ignores a source the driver reports", requested: nil, got: fromSnapshot("snap-1"), want: true},
		{name: "a restore is confirmed by the same snapshot", requested: fromSnapshot("snap-1"), got: fromSnapshot("snap-1"), want: true},
		{name: "a restore from another snapshot is not confirmed", requested: fromSnapshot("snap-1"), got: fromSnapshot("snap-2")},
		{name: "a restore the driver reports no source for is not confirmed", requested: fromSnapshot("snap-1"), got: nil},
		{name: "a restore reported with an empty source is not confirmed", requested: fromSnapshot("snap-1"),
			got: &csi.VolumeContentSource{}},
		{name: "a restore reported as a clone of the same id is not confirmed", requested: fromSnapshot("id-1"), got: fromVolume("id-1")},
		{name: "a clone is confirmed by the same volume", requested: fromVolume("vol-1"), got: fromVolume("vol-1"), want: true},
		{name: "a clone of another volume is not confirmed", requested: fromVolume("vol-1"), got: fromVolume("vol-2")},
		{name: "a clone the driver reports no source for is not confirmed", requested: fromVolume("vol-1"), got: nil},
		{name: "a clone reported as a restore of the same id is not confirmed", requested: fromVolume("id-1"), got: fromSnapshot("id-1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := confirmsSource(tt.requested, tt.got); got != tt.want {
				t.Errorf("confirmsSource(%s, %s) = %v, want %v", text(tt.requested), text(tt.got), got, tt.want)
			}
		})
	}
}

package snapshotvalidation

import (
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
)

func TestContent(t *testing.T) {
	dynamic := newContent(fromVolume("vol-1"), refTo("ns", "snap"))
	bound := newContent(fromVolume("vol-1"), refTo("ns", "snap"), boundTo("uid-1"))
	noRefNamespace := newContent(fromVolume("vol-1"), refTo("", "snap"), boundTo("uid-1"))
	prevent := ContentOptions{PreventVolumeModeConversion: true}
	for name, tc := range map[string]struct {
		op       Operation
		obj, old *snapv1.VolumeSnapshotContent
		opts     ContentOptions
		want     []string
		// message, when set, is the whole message users see.
		message string
	}{
		// The seed's CREATE rows.
		"create of a dynamic content is allowed":            {op: Create, obj: dynamic},
		"create of a pre-provisioned content is allowed":    {op: Create, obj: newContent(fromSnapshotHandle("snap-1"), refTo("ns", "snap"))},
		"create without a handle is denied":                 {op: Create, obj: newContent(refTo("ns", "snap")), want: []string{handleRequired}},
		"create with both handles is denied":                {op: Create, obj: newContent(fromVolume("v"), fromSnapshotHandle("s"), refTo("ns", "snap")), want: []string{handleForbidden}},
		"create without the snapshot's name is denied":      {op: Create, obj: newContent(fromVolume("v"), refTo("ns", "")), want: []string{refNameRequired}},
		"create without the snapshot's namespace is denied": {op: Create, obj: newContent(fromVolume("v"), refTo("", "snap")), want: []string{refNamespaceRequired}},
		"create with every rule broken reports each":        {op: Create, obj: newContent(), want: []string{handleRequired, refNameRequired, refNamespaceRequired}},

		// The seed's UPDATE rows.
		"update keeping the source is allowed": {op: Update, obj: newContent(fromVolume("vol-1"), refTo("ns", "snap"), contentReady()), old: dynamic},
		"update changing the volume handle is denied": {op: Update, obj: newContent(fromVolume("vol-2"), refTo("ns", "snap")), old: dynamic,
			want: []string{volumeHandleImmutable}},
		"update changing the snapshot handle is denied": {op: Update, obj: newContent(fromSnapshotHandle("s-2"), refTo("ns", "snap")),
			old: newContent(fromSnapshotHandle("s-1"), refTo("ns", "snap")), want: []string{snapshotHandleImmutable}},
		"update binding the reference (setting its uid) is allowed": {op: Update, obj: bound, old: dynamic},
		"update of an unbound reference is allowed":                 {op: Update, obj: newContent(fromVolume("vol-1"), refTo("ns", "other")), old: dynamic},
		"update of a bound reference's name is denied": {op: Update, obj: newContent(fromVolume("vol-1"), refTo("ns", "other"), boundTo("uid-1")), old: bound,
			want:    []string{refImmutable},
			message: `spec.volumeSnapshotRef: Invalid value: {"namespace":"ns","name":"other","uid":"uid-1"}: field is immutable once bound (uid uid-1 of ns/snap)`},
		"update of a bound reference's uid is denied": {op: Update, obj: newContent(fromVolume("vol-1"), refTo("ns", "snap"), boundTo("uid-2")), old: bound,
			want: []string{refImmutable}},
		"update clearing a bound reference is denied": {op: Update, obj: newContent(fromVolume("vol-1"), refTo("ns", "snap")), old: bound,
			want: []string{refImmutable}},
		"volume mode change without --prevent-volume-mode-conversion is allowed": {op: Update,
			obj: newContent(fromVolume("vol-1"), refTo("ns", "snap"), volumeMode(v1.PersistentVolumeFilesystem)),
			old: newContent(fromVolume("vol-1"), refTo("ns", "snap"), volumeMode(v1.PersistentVolumeBlock))},
		"volume mode change with --prevent-volume-mode-conversion is denied": {op: Update, opts: prevent,
			obj: newContent(fromVolume("vol-1"), refTo("ns", "snap"), volumeMode(v1.PersistentVolumeFilesystem)),
			old: newContent(fromVolume("vol-1"), refTo("ns", "snap"), volumeMode(v1.PersistentVolumeBlock)), want: []string{volumeModeImmutable},
			message: `spec.sourceVolumeMode: Invalid value: "Filesystem": field is immutable with --prevent-volume-mode-conversion (was "Block")`},
		"volume mode set for the first time with --prevent-volume-mode-conversion is denied": {op: Update, opts: prevent,
			obj: newContent(fromVolume("vol-1"), refTo("ns", "snap"), volumeMode(v1.PersistentVolumeBlock)), old: dynamic, want: []string{volumeModeImmutable}},
		"volume mode kept with --prevent-volume-mode-conversion is allowed": {op: Update, opts: prevent,
			obj: newContent(fromVolume("vol-1"), refTo("ns", "snap"), volumeMode(v1.PersistentVolumeBlock), contentReady()),
			old: newContent(fromVolume("vol-1"), refTo("ns", "snap"), volumeMode(v1.PersistentVolumeBlock))},

		// Ratcheting (the seed's "Backwards compatibility").
		"old valid, new invalid: denied": {op: Update, obj: newContent(fromVolume("vol-1"), refTo("", "snap")), old: dynamic,
			want: []string{refNamespaceRequired}},
		"old invalid, finalizer removed: allowed": {op: Update, obj: noRefNamespace,
			old: newContent(fromVolume("vol-1"), refTo("", "snap"), boundTo("uid-1"), contentFinalizers("snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection"))},
		"old invalid, status updated: allowed": {op: Update, obj: newContent(fromVolume("v"), fromSnapshotHandle("s"), contentReady()),
			old: newContent(fromVolume("v"), fromSnapshotHandle("s"))},
		"old invalid, no-op update: allowed": {op: Update, obj: newContent(), old: newContent()},
		"old invalid, bound reference still immutable": {op: Update, obj: newContent(fromVolume("vol-1"), refTo("ns", "snap"), boundTo("uid-1")),
			old: noRefNamespace, want: []string{refImmutable}},
		"old invalid, delete: allowed": {op: Delete, old: newContent()},
	} {
		t.Run(name, func(t *testing.T) {
			checkErrors(t, Content(tc.op, tc.obj, tc.old, tc.opts), tc.want, tc.message)
		})
	}
}

package snapshotvalidation

import (
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
)

func TestSnapshot(t *testing.T) {
	valid := newSnapshot(fromClaim("data"))
	bothSources := newSnapshot(fromClaim("data"), fromContent("content"))
	for name, tc := range map[string]struct {
		op       Operation
		obj, old *snapv1.VolumeSnapshot
		want     []string
		// message, when set, is the whole message users see.
		message string
	}{
		// The seed's CREATE rows.
		"create from a claim is allowed":   {op: Create, obj: valid},
		"create from a content is allowed": {op: Create, obj: newSnapshot(fromContent("content"))},
		"create without a source is denied": {op: Create, obj: newSnapshot(), want: []string{sourceRequired},
			message: "spec.source: Required value: exactly one of persistentVolumeClaimName and volumeSnapshotContentName must be set"},
		"create with both sources is denied": {op: Create, obj: bothSources, want: []string{sourceForbidden},
			message: "spec.source: Forbidden: exactly one of persistentVolumeClaimName and volumeSnapshotContentName must be set, not both"},
		"create without a class name is allowed": {op: Create, obj: newSnapshot(fromClaim("data"))},
		"create with a class name is allowed":    {op: Create, obj: newSnapshot(fromClaim("data"), withClass("gold"))},
		"create with an empty class name is denied": {op: Create, obj: newSnapshot(fromClaim("data"), withClass("")), want: []string{classInvalid},
			message: `spec.volumeSnapshotClassName: Invalid value: "": must not be the empty string: leave it unset to use the driver's default class`},
		"create with every rule broken reports each": {op: Create, obj: newSnapshot(withClass("")), want: []string{sourceRequired, classInvalid}},

		// The seed's UPDATE rows.
		"update keeping the source is allowed": {op: Update, obj: newSnapshot(fromClaim("data"), withClass("gold")), old: valid},
		"update changing the claim is denied": {op: Update, obj: newSnapshot(fromClaim("other")), old: valid, want: []string{claimImmutable},
			message: `spec.source.persistentVolumeClaimName: Invalid value: "other": field is immutable (was "data")`},
		"update from claim to content is denied": {op: Update, obj: newSnapshot(fromContent("content")), old: valid,
			want:    []string{claimImmutable, contentNameImmutable},
			message: `[spec.source.persistentVolumeClaimName: Invalid value: null: field is immutable (was "data"), spec.source.volumeSnapshotContentName: Invalid value: "content": field is immutable (was <unset>)]`},
		"update changing the content name is denied": {op: Update, obj: newSnapshot(fromContent("other")), old: newSnapshot(fromContent("content")),
			want: []string{contentNameImmutable}},
		"update to an empty class name is denied": {op: Update, obj: newSnapshot(fromClaim("data"), withClass("")), old: valid,
			want: []string{classInvalid}},
		"update changing the class name is allowed": {op: Update, obj: newSnapshot(fromClaim("data"), withClass("silver")),
			old: newSnapshot(fromClaim("data"), withClass("gold"))},

		// Ratcheting (the seed's "Backwards compatibility").
		"old valid, new invalid: denied": {op: Update, obj: newSnapshot(fromClaim("data"), withClass("")),
			old: newSnapshot(fromClaim("data"), withClass("gold")), want: []string{classInvalid}},
		"old invalid, finalizer removed: allowed": {op: Update, obj: newSnapshot(fromClaim("data"), fromContent("content")),
			old: newSnapshot(fromClaim("data"), fromContent("content"), snapshotFinalizers("snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection"))},
		"old invalid, status updated: allowed": {op: Update, obj: newSnapshot(withClass(""), snapshotReady()), old: newSnapshot(withClass(""))},
		"old invalid, labels changed: allowed": {op: Update, obj: newSnapshot(withClass(""), snapshotLabels(map[string]string{"a": "b"})),
			old: newSnapshot(withClass(""))},
		"old invalid, no-op update: allowed":  {op: Update, obj: bothSources, old: bothSources},
		"old invalid, class fixed: allowed":   {op: Update, obj: newSnapshot(withClass("gold")), old: newSnapshot(withClass(""))},
		"old invalid, source still immutable": {op: Update, obj: valid, old: bothSources, want: []string{contentNameImmutable}},
		"old invalid, claim still immutable": {op: Update, obj: newSnapshot(fromClaim("other"), withClass("")),
			old: newSnapshot(fromClaim("data"), withClass("")), want: []string{claimImmutable}},
		"old invalid, delete: allowed": {op: Delete, old: bothSources},
		"old valid, delete: allowed":   {op: Delete, old: valid},
		"connect: allowed":             {op: Connect, obj: newSnapshot()},
	} {
		t.Run(name, func(t *testing.T) {
			checkErrors(t, Snapshot(tc.op, tc.obj, tc.old), tc.want, tc.message)
		})
	}
}

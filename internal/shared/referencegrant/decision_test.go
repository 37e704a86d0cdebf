package referencegrant

import (
	"errors"
	"strconv"
	"testing"
)

func TestDecide(t *testing.T) {
	fooBackupMissing := `no ReferenceGrant in namespace "prod" allows PersistentVolumeClaims in namespace "test" to use VolumeSnapshot "foo-backup": ` +
		`create one with from {group: "", kind: PersistentVolumeClaim, namespace: test} and to {group: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: foo-backup}`

	tests := []struct {
		name   string
		grants []Grant
		ref    Reference
		want   Decision
	}{
		{
			name:   "a matching grant allows the reference and is named",
			grants: []Grant{grant(claimsFromTest, fooBackup)},
			ref:    claimUsesSnapshot(),
			want: Decision{
				Allowed: true, Reason: ReasonAllowed, Grant: "prod/bar",
				Message: `ReferenceGrant "bar" in namespace "prod" allows PersistentVolumeClaims in namespace "test" to use VolumeSnapshot "foo-backup"`,
			},
		},
		{
			name: "of several allowing grants the one with the lowest name is reported",
			grants: []Grant{
				grant(named("zed"), claimsFromTest, everySnapshot),
				grant(named("alpha"), claimsFromTest, fooBackup),
				grant(named("aaa"), from("", claimKind, "staging"), fooBackup),
			},
			ref:  claimUsesSnapshot(),
			want: Decision{Allowed: true, Reason: ReasonAllowed, Grant: "prod/alpha", Message: `ReferenceGrant "alpha" in namespace "prod" allows PersistentVolumeClaims in namespace "test" to use VolumeSnapshot "foo-backup"`},
		},
		{
			name: "no grant refuses the reference and says which grant would allow it",
			ref:  claimUsesSnapshot(),
			want: Decision{Reason: ReasonNotGranted, Message: fooBackupMissing},
		},
		{
			name:   "grants that do not match refuse the reference",
			grants: []Grant{grant(inNamespace("test"), claimsFromTest, fooBackup), grant(claimsFromTest, to(snapshotGroup, snapshotKind, "other"))},
			ref:    claimUsesSnapshot(),
			want:   Decision{Reason: ReasonNotGranted, Message: fooBackupMissing},
		},
		{
			name: "a same-namespace reference is not special here: the caller decides whether it needs a grant",
			ref:  claimUsesSnapshot(func(r *Reference) { r.FromNamespace = "prod" }),
			want: Decision{Reason: ReasonNotGranted, Message: `no ReferenceGrant in namespace "prod" allows PersistentVolumeClaims in namespace "prod" to use VolumeSnapshot "foo-backup": ` +
				`create one with from {group: "", kind: PersistentVolumeClaim, namespace: prod} and to {group: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: foo-backup}`},
		},
		{
			name: "a core-group target is written as an empty group",
			ref: claimUsesSnapshot(func(r *Reference) {
				r.ToGroup, r.ToKind, r.ToName = "", claimKind, "foo-data"
			}),
			want: Decision{Reason: ReasonNotGranted, Message: `no ReferenceGrant in namespace "prod" allows PersistentVolumeClaims in namespace "test" to use PersistentVolumeClaim "foo-data": ` +
				`create one with from {group: "", kind: PersistentVolumeClaim, namespace: test} and to {group: "", kind: PersistentVolumeClaim, name: foo-data}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.grants, tt.ref); got != tt.want {
				t.Errorf("Decide() = %+v\nwant       %+v", got, tt.want)
			}
		})
	}
}

func TestQuotedEscapesOnlyWhatNeedsIt(t *testing.T) {
	for _, s := range []string{"foo-backup", "", `a"b`, "a\\b", "tab\there", "ünïcode"} {
		if got, want := message(nil).quoted(s).String(), strconv.Quote(s); got != want {
			t.Errorf("quoted(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestUnavailable(t *testing.T) {
	got := unavailable(claimUsesSnapshot(), errors.New("ReferenceGrant API (…) is not served by the API server: is the CRD installed?"))
	want := Decision{
		Reason: ReasonUnavailable,
		Message: `cannot check whether PersistentVolumeClaims in namespace "test" may use VolumeSnapshot "foo-backup" in namespace "prod": ` +
			`ReferenceGrant API (…) is not served by the API server: is the CRD installed?`,
	}
	if got != want {
		t.Errorf("unavailable() = %+v\nwant            %+v", got, want)
	}
}

func TestPlural(t *testing.T) {
	tests := map[string]string{
		"PersistentVolumeClaim": "PersistentVolumeClaims",
		"VolumeSnapshotClass":   "VolumeSnapshotClasses",
		"NetworkPolicy":         "NetworkPolicies",
		"Gateway":               "Gateways",
		"":                      "objects",
		"Gateway\"":             "Gateway\"s",
	}
	for kind, want := range tests {
		if got := message(nil).plural(kind).String(); got != want {
			t.Errorf("plural(%q) = %q, want %q", kind, got, want)
		}
	}
}

package referencegrant

import (
	"reflect"
	"testing"
)

func TestAllows(t *testing.T) {
	tests := []struct {
		name  string
		grant Grant
		ref   Reference
		want  bool
	}{
		// KEP-3294's e2e cases, as far as the grant decides them.
		{
			name:  "a cross-namespace reference is allowed by a grant in the snapshot's namespace",
			grant: grant(claimsFromTest, fooBackup),
			ref:   claimUsesSnapshot(),
			want:  true,
		},
		{
			name:  "a cross-namespace reference is refused by a grant for another snapshot",
			grant: grant(claimsFromTest, to(snapshotGroup, snapshotKind, "other-backup")),
			ref:   claimUsesSnapshot(),
		},
		{
			name:  "a grant in the claim's namespace is irrelevant to a cross-namespace reference",
			grant: grant(inNamespace("test"), claimsFromTest, fooBackup),
			ref:   claimUsesSnapshot(),
		},
		{
			name:  "a same-namespace reference is allowed by a grant from its own namespace",
			grant: grant(from("", claimKind, "prod"), fooBackup),
			ref:   claimUsesSnapshot(func(r *Reference) { r.FromNamespace = "prod" }),
			want:  true,
		},
		// Names.
		{
			name:  "a grant without a name allows every snapshot in its namespace",
			grant: grant(claimsFromTest, everySnapshot),
			ref:   claimUsesSnapshot(func(r *Reference) { r.ToName = "any-backup" }),
			want:  true,
		},
		{
			name:  "a grant with a name does not allow another snapshot",
			grant: grant(claimsFromTest, fooBackup),
			ref:   claimUsesSnapshot(func(r *Reference) { r.ToName = "other-backup" }),
		},
		// Each field of From and To must match.
		{
			name:  "a grant from another namespace does not allow the reference",
			grant: grant(from("", claimKind, "staging"), fooBackup),
			ref:   claimUsesSnapshot(),
		},
		{
			name:  "a grant from another kind does not allow the reference",
			grant: grant(from("", "Pod", "test"), fooBackup),
			ref:   claimUsesSnapshot(),
		},
		{
			name:  "a grant from another group does not allow the reference",
			grant: grant(from("example.com", claimKind, "test"), fooBackup),
			ref:   claimUsesSnapshot(),
		},
		{
			name:  "the core group is the empty string, not \"core\"",
			grant: grant(from("core", claimKind, "test"), fooBackup),
			ref:   claimUsesSnapshot(),
		},
		{
			name:  "a grant to another kind does not allow the reference",
			grant: grant(claimsFromTest, to(snapshotGroup, "VolumeSnapshotContent", "")),
			ref:   claimUsesSnapshot(),
		},
		{
			name:  "a grant to another group does not allow the reference",
			grant: grant(claimsFromTest, to("", snapshotKind, "foo-backup")),
			ref:   claimUsesSnapshot(),
		},
		{
			name:  "a grant to a group with a version does not allow the reference",
			grant: grant(claimsFromTest, to(snapshotGroup+"/v1", snapshotKind, "foo-backup")),
			ref:   claimUsesSnapshot(),
		},
		{
			name:  "a grant in another namespace than the snapshot's does not allow the reference",
			grant: grant(inNamespace("staging"), claimsFromTest, fooBackup),
			ref:   claimUsesSnapshot(),
		},
		// Several entries are ORed, From and To independently.
		{
			name:  "any of several from entries may match",
			grant: grant(from("", claimKind, "staging"), claimsFromTest, fooBackup),
			ref:   claimUsesSnapshot(),
			want:  true,
		},
		{
			name:  "any of several to entries may match",
			grant: grant(claimsFromTest, to("", "Secret", ""), fooBackup),
			ref:   claimUsesSnapshot(),
			want:  true,
		},
		{
			name:  "several entries none of which matches do not allow the reference",
			grant: grant(from("", claimKind, "staging"), from("", "Pod", "test"), to("", "Secret", ""), to(snapshotGroup, snapshotKind, "x")),
			ref:   claimUsesSnapshot(),
		},
		{
			name:  "a grant without to entries allows nothing",
			grant: grant(claimsFromTest),
			ref:   claimUsesSnapshot(),
		},
		{
			name:  "a grant being deleted allows nothing, even while a finalizer holds it",
			grant: grant(claimsFromTest, fooBackup, terminating),
			ref:   claimUsesSnapshot(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Allows(tt.grant, tt.ref); got != tt.want {
				t.Errorf("Allows(%+v, %+v) = %v, want %v", tt.grant, tt.ref, got, tt.want)
			}
		})
	}
}

func TestConversion(t *testing.T) {
	want := grant(claimsFromTest, from("gateway.networking.k8s.io", "Gateway", "infra"), fooBackup, everySnapshot)
	tests := []struct {
		name    string
		convert func() Grant
		want    Grant
	}{
		{name: "a v1 grant keeps every entry, a missing name is empty", convert: func() Grant { return FromV1(v1Grant(want)) }, want: want},
		{name: "a v1beta1 grant converts like v1", convert: func() Grant { return FromV1beta1(v1beta1Grant(want)) }, want: want},
		{name: "a nil v1 grant is empty", convert: func() Grant { return FromV1(nil) }},
		{name: "a nil v1beta1 grant is empty", convert: func() Grant { return FromV1beta1(nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.convert(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("conversion = %+v\nwant         %+v", got, tt.want)
			}
		})
	}
}

func TestClaimReference(t *testing.T) {
	got := ClaimReference("test", "snapshot.storage.k8s.io", "VolumeSnapshot", "prod", "foo-backup")
	want := Reference{FromGroup: "", FromKind: "PersistentVolumeClaim", FromNamespace: "test",
		ToGroup: "snapshot.storage.k8s.io", ToKind: "VolumeSnapshot", ToNamespace: "prod", ToName: "foo-backup"}
	if got != want {
		t.Errorf("ClaimReference() = %+v, want %+v", got, want)
	}
}

func TestLinkReference(t *testing.T) {
	got := LinkReference("test", "prod", "foo-backup")
	want := Reference{FromGroup: snapshotGroup, FromKind: "VolumeSnapshotLink", FromNamespace: "test",
		ToGroup: snapshotGroup, ToKind: snapshotKind, ToNamespace: "prod", ToName: "foo-backup"}
	if got != want {
		t.Errorf("LinkReference() = %+v, want %+v", got, want)
	}
}

// TestLinkGrants: the KEP-3294 VolumeSnapshotLink flow. Alice's grant in
// prod lets VolumeSnapshotLinks in test name the VolumeSnapshot
// foo-backup; every field of it must match, in both API versions.
func TestLinkGrants(t *testing.T) {
	linksFromTest := from(snapshotGroup, "VolumeSnapshotLink", "test")
	link := LinkReference("test", "prod", "foo-backup")
	tests := []struct {
		name  string
		grant Grant
		want  bool
	}{
		{"the KEP's grant allows the link", grant(linksFromTest, fooBackup), true},
		{"a grant for every snapshot of the namespace allows the link", grant(linksFromTest, everySnapshot), true},
		{"a grant for another snapshot does not", grant(linksFromTest, to(snapshotGroup, snapshotKind, "other-backup")), false},
		{"a grant from links in another namespace does not", grant(from(snapshotGroup, "VolumeSnapshotLink", "staging"), fooBackup), false},
		{"a grant from claims does not allow links", grant(claimsFromTest, fooBackup), false},
		{"a grant from another group's kind does not", grant(from("example.com", "VolumeSnapshotLink", "test"), fooBackup), false},
		{"a grant from the core group does not", grant(from("", "VolumeSnapshotLink", "test"), fooBackup), false},
		{"a grant in the link's namespace does not", grant(inNamespace("test"), linksFromTest, fooBackup), false},
		{"a grant to another kind does not", grant(linksFromTest, to(snapshotGroup, "VolumeSnapshotContent", "foo-backup")), false},
		{"a terminating grant does not", grant(terminating, linksFromTest, fooBackup), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for version, g := range map[string]Grant{"v1": FromV1(v1Grant(tt.grant)), "v1beta1": FromV1beta1(v1beta1Grant(tt.grant))} {
				g.Terminating = tt.grant.Terminating
				if got := Decide([]Grant{g}, link).Allowed; got != tt.want {
					t.Errorf("%s: Decide().Allowed = %v, want %v", version, got, tt.want)
				}
			}
		})
	}
}

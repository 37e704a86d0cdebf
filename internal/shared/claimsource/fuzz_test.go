package claimsource

import (
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// FuzzDecideSnapshot runs the whole decision provisioning makes
// (Policy.Decide) on a claim naming a snapshot, with any spelling of the
// source and any state of the snapshot and its content. It must not panic,
// a malformed source (one ValidateClaimSources refuses) must never be
// provisioned from, a refusal must say why, and a claim provisioned from a
// snapshot gets that ready snapshot's handle, of this driver, with a grant
// when it names a namespace.
func FuzzDecideSnapshot(f *testing.F) {
	// group, kind, name, namespace (""+noNamespace: none), granted, gate,
	// then the snapshot: bound content, ready, restore size, being deleted,
	// the content's driver, handle, snapshot ref namespace, the claim's size.
	add := func(group, kind, name, namespace string, noNamespace, granted, gate bool,
		content string, ready bool, restoreSize string, deleting bool, contentDriver, handle, refNamespace string, request int64) {
		f.Add(group, kind, name, namespace, noNamespace, granted, gate, content, ready, restoreSize, deleting, contentDriver, handle, refNamespace, request)
	}
	sg, sk := datasource.SnapshotGroup, datasource.SnapshotKind
	add(sg, sk, "snap", "prod", false, true, true, "content", true, "1Gi", false, driver, "handle-1", "prod", 1<<30)
	add(sg, sk, "snap", "prod", false, false, true, "content", true, "1Gi", false, driver, "handle-1", "prod", 1<<30)
	add(sg, sk, "snap", "prod", false, true, false, "content", true, "1Gi", false, driver, "handle-1", "prod", 1<<30)
	add(sg, sk, "snap", "test", false, false, true, "content", true, "1Gi", false, driver, "handle-1", "test", 1<<30)
	add(sg, sk, "snap", "", true, false, true, "content", true, "1Gi", false, driver, "handle-1", "test", 1<<30)
	add(sg+"/v1", sk, "snap", "prod", false, true, true, "content", true, "1Gi", false, driver, "handle-1", "prod", 1<<30)
	add("Snapshot.storage.k8s.io", sk, "snap", "prod", false, true, true, "content", true, "1Gi", false, driver, "handle-1", "prod", 1<<30)
	add(sg, "volumesnapshot", "snap", "prod", false, true, true, "content", true, "1Gi", false, driver, "handle-1", "prod", 1<<30)
	add(sg, "", "snap", "prod", false, true, true, "content", true, "1Gi", false, driver, "handle-1", "prod", 1<<30)
	add(sg, sk, "", "prod", false, true, true, "content", true, "1Gi", false, driver, "handle-1", "prod", 1<<30)
	add("", "", "", "", true, true, true, "", false, "", false, "", "", "", 0)
	add(sg, sk, "snap", "PROD", false, true, true, "content", true, "1Gi", false, driver, "handle-1", "PROD", 1<<30)
	add(sg, sk, "snap", "prod", false, true, true, "", true, "1Gi", false, driver, "handle-1", "prod", 1<<30)
	add(sg, sk, "snap", "prod", false, true, true, "content", false, "1Gi", false, driver, "handle-1", "prod", 1<<30)
	add(sg, sk, "snap", "prod", false, true, true, "content", true, "-1", false, driver, "handle-1", "prod", 1<<30)
	add(sg, sk, "snap", "prod", false, true, true, "content", true, "1Ei", false, driver, "handle-1", "prod", 1<<30)
	add(sg, sk, "snap", "prod", false, true, true, "content", true, "not-a-size", false, driver, "handle-1", "prod", -1)
	add(sg, sk, "snap", "prod", false, true, true, "content", true, "1Gi", true, driver, "handle-1", "prod", 1<<30)
	add(sg, sk, "snap", "prod", false, true, true, "content", true, "1Gi", false, "other.csi", "handle-1", "prod", 1<<30)
	add(sg, sk, "snap", "prod", false, true, true, "content", true, "1Gi", false, driver, "", "prod", 1<<30)
	add(sg, sk, "snap", "prod", false, true, true, "content", true, "1Gi", false, driver, "handle-1", "test", 1<<30)
	add("", datasource.ClaimKind, "src", "prod", false, true, true, "", false, "", false, "", "", "", 1<<30)
	add(sg, datasource.LinkKind, "link", "", true, true, true, "", false, "", false, "", "", "", 1<<30)
	f.Fuzz(func(t *testing.T, group, kind, name, namespace string, noNamespace, isGranted, gate bool,
		contentName string, ready bool, restoreSize string, deleting bool, contentDriver, handle, refNamespace string, request int64) {
		claim := &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "restore", Namespace: "test", CreationTimestamp: metav1.Now()},
			Spec: v1.PersistentVolumeClaimSpec{Resources: requests(request),
				DataSourceRef: &v1.TypedObjectReference{APIGroup: &group, Kind: kind, Name: name}},
		}
		if !noNamespace {
			claim.Spec.DataSourceRef.Namespace = &namespace
		}
		target := namespace
		if target == "" {
			target = claim.Namespace
		}
		// The snapshot the claim names exists, in whatever state, if it can:
		// the API server gives every object a valid name and namespace.
		snap, content := newPair(func(s *snapv1.VolumeSnapshot, c *snapv1.VolumeSnapshotContent) {
			s.Namespace, s.Name = target, name
			s.Status.BoundVolumeSnapshotContentName, s.Status.ReadyToUse = &contentName, &ready
			s.Status.RestoreSize = nil
			if q, err := resource.ParseQuantity(restoreSize); err == nil {
				s.Status.RestoreSize = &q
			}
			if deleting {
				s.DeletionTimestamp = &metav1.Time{Time: deletedAt}
			}
			c.Name, c.Spec.Driver, c.Status.SnapshotHandle = contentName, contentDriver, &handle
			c.Spec.VolumeSnapshotRef.Namespace, c.Spec.VolumeSnapshotRef.Name = refNamespace, name
		})
		reader := &snapshotReader{snap: snap, content: content}
		if len(validation.IsDNS1123Subdomain(name)) > 0 || len(validation.IsDNS1123Label(target)) > 0 {
			reader = &snapshotReader{}
		}
		grants := &grantChecker{decision: notGranted}
		if isGranted {
			grants.decision = granted
		}
		empty := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		policy := Policy{
			CrossNamespace: gate, Grants: grants,
			SnapshotLinks: true, Links: noLinks{},
			Driver:    Driver{Name: driver, RestoresSnapshots: true, Clones: true, PreventVolumeModeConversion: true},
			Snapshots: reader,
			Claims:    corelisters.NewPersistentVolumeClaimLister(empty),
			Volumes:   corelisters.NewPersistentVolumeLister(empty),
		}
		src, verdict, err := policy.Decide(claim, "class")
		if err != nil {
			return
		}
		if verdict.Action == Refuse && (verdict.Reason == "" || verdict.Message == "") {
			t.Fatalf("refusal without a reason or message: %+v", verdict)
		}
		if verdict.Action != Provision {
			return
		}
		if errs := datasource.ValidateClaimSources(claim.Spec); len(errs) > 0 {
			t.Fatalf("the malformed source %+v (%v) is provisioned: %+v", claim.Spec.DataSourceRef, errs, verdict)
		}
		if src.NeedsGrant() && (!gate || !isGranted) {
			t.Fatalf("%s is provisioned without the gate (%t) and a grant (%t)", src, gate, isGranted)
		}
		if verdict.Uses.Type() != datasource.Snapshot {
			return
		}
		switch {
		case verdict.Content.GetSnapshot().GetSnapshotId() != handle || handle == "":
			t.Fatalf("restored from snapshot id %q, want the content's handle %q", verdict.Content.GetSnapshot().GetSnapshotId(), handle)
		case !ready || contentDriver != driver || deleting || refNamespace != target:
			t.Fatalf("restored from a snapshot not fit for it (ready %t, driver %q, deleting %t, ref namespace %q): %+v",
				ready, contentDriver, deleting, refNamespace, verdict)
		case verdict.Uses.Namespace != target || verdict.Uses.Name != name:
			t.Fatalf("restored from %s, the claim names %s/%s", verdict.Uses, target, name)
		}
	})
}

// noLinks is a link cache without links.
type noLinks struct{}

func (noLinks) GetLink(string, string) (*snapv1alpha1.VolumeSnapshotLink, error) { return nil, nil }

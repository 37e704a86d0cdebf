package claimsource

import (
	"errors"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
)

type snapshotReader struct {
	snap    *snapv1.VolumeSnapshot
	content *snapv1.VolumeSnapshotContent
	err     error
	reads   int
}

func (r *snapshotReader) GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error) {
	r.reads++
	if r.snap == nil || r.snap.Namespace != namespace || r.snap.Name != name {
		return nil, r.err
	}
	return r.snap, r.err
}

func (r *snapshotReader) GetContent(name string) (*snapv1.VolumeSnapshotContent, error) {
	r.reads++
	if r.content == nil || r.content.Name != name {
		return nil, nil
	}
	return r.content, nil
}

type grantChecker struct {
	decision referencegrant.Decision
	checked  []referencegrant.Reference
}

func (g *grantChecker) Check(ref referencegrant.Reference) referencegrant.Decision {
	g.checked = append(g.checked, ref)
	return g.decision
}

func restoreClaim(namespace string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "restore", Namespace: "test"},
		Spec: v1.PersistentVolumeClaimSpec{Resources: requests(1 << 30), DataSourceRef: &v1.TypedObjectReference{
			APIGroup: ptr(datasource.SnapshotGroup), Kind: datasource.SnapshotKind, Name: "snap", Namespace: ptr(namespace)}},
	}
}

func TestPolicyGathersFromTheCaches(t *testing.T) {
	snap, content := newPair()
	reader := &snapshotReader{snap: snap, content: content}
	grants := &grantChecker{decision: granted}
	p := Policy{CrossNamespace: true, Grants: grants, Driver: Driver{Name: driver, RestoresSnapshots: true}, Snapshots: reader}

	src, v, err := p.Decide(restoreClaim("prod"), "fast")
	if err != nil || v.Action != Provision || v.Content.GetSnapshot().GetSnapshotId() != "handle-1" {
		t.Fatalf("Decide() = %v, %+v, %v; want Provision from handle-1", src, v, err)
	}
	want := referencegrant.ClaimReference("test", datasource.SnapshotGroup, datasource.SnapshotKind, "prod", "snap")
	if len(grants.checked) != 1 || grants.checked[0] != want {
		t.Errorf("grants checked %v, want once %v", grants.checked, want)
	}

	reader.reads, grants.decision = 0, notGranted
	if _, v, _ := p.Decide(restoreClaim("prod"), "fast"); v.Reason != ReasonGrantMissing || reader.reads != 0 {
		t.Errorf("without a grant: %+v after %d snapshot reads; want %s and no read", v, reader.reads, ReasonGrantMissing)
	}

	reader.err, grants.decision = errors.New("the API is not served"), granted
	if _, v, _ := p.Decide(restoreClaim("prod"), "fast"); v.Reason != ReasonSnapshotAPIUnavailable {
		t.Errorf("unreadable cache: %+v, want %s", v, ReasonSnapshotAPIUnavailable)
	}

	p.CrossNamespace, grants.checked = false, nil
	if _, v, _ := p.Admit(restoreClaim("prod")); v.Reason != ReasonCrossNamespaceDisabled || len(grants.checked) != 0 {
		t.Errorf("gate off: %+v after %d grant checks; want %s and none", v, len(grants.checked), ReasonCrossNamespaceDisabled)
	}

	bad := restoreClaim("prod")
	bad.Spec.DataSourceRef.APIGroup = ptr("snapshot.storage.k8s.io/v1")
	if _, _, err := p.Decide(bad, "fast"); err == nil {
		t.Error("a source with a versioned group must be an error")
	}
}

func TestPolicyGathersTheCloneSource(t *testing.T) {
	src, pv := boundSource()
	claims := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	volumes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	p := Policy{Driver: Driver{Name: driver, Clones: true},
		Claims: corelisters.NewPersistentVolumeClaimLister(claims), Volumes: corelisters.NewPersistentVolumeLister(volumes)}
	clone := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "clone", Namespace: "ns"},
		Spec: v1.PersistentVolumeClaimSpec{Resources: requests(1 << 30), DataSource: &v1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "src"}}}

	if _, v, _ := p.Decide(clone, "fast"); v.Reason != ReasonSourceClaimNotFound {
		t.Errorf("absent source: %+v, want %s", v, ReasonSourceClaimNotFound)
	}
	if err := claims.Add(src); err != nil {
		t.Fatal(err)
	}
	if _, v, _ := p.Decide(clone, "fast"); v.Reason != ReasonSourceClaimNotBound {
		t.Errorf("source whose volume is not cached: %+v, want %s", v, ReasonSourceClaimNotBound)
	}
	if err := volumes.Add(pv); err != nil {
		t.Fatal(err)
	}
	if _, v, _ := p.Decide(clone, "fast"); v.Action != Provision || v.Content.GetVolume().GetVolumeId() != "vol-1" {
		t.Errorf("bound source: %+v, want Provision from vol-1", v)
	}
}

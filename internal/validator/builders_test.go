package validator

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	popv1beta1 "github.com/xns-csi/csi-provisioner/pkg/apis/populator/v1beta1"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// The KEP-3294 example: Bob's claims are in "test", Alice's snapshot
// foo-backup is in "prod".

type claimOption func(*v1.PersistentVolumeClaim)

// newClaim is a pending claim "name" in namespace test.
func newClaim(name string, opts ...claimOption) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test", UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// ref sets spec.dataSourceRef; namespace "" leaves its namespace unset.
func ref(group, kind, namespace, name string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.DataSourceRef = &v1.TypedObjectReference{Kind: kind, Name: name}
		if group != "" {
			c.Spec.DataSourceRef.APIGroup = &group
		}
		if namespace != "" {
			c.Spec.DataSourceRef.Namespace = &namespace
		}
	}
}

func restoring(namespace, name string) claimOption {
	return ref(datasource.SnapshotGroup, datasource.SnapshotKind, namespace, name)
}
func cloning(namespace, name string) claimOption {
	return ref("", datasource.ClaimKind, namespace, name)
}
func throughLink(name string) claimOption {
	return ref(datasource.SnapshotGroup, datasource.LinkKind, "", name)
}
func populatedBy(group, kind string) claimOption { return ref(group, kind, "", "src") }

// legacySnapshot sets only the legacy spec.dataSource.
func legacySnapshot(name string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		group := datasource.SnapshotGroup
		c.Spec.DataSource = &v1.TypedLocalObjectReference{APIGroup: &group, Kind: datasource.SnapshotKind, Name: name}
	}
}

func bound(c *v1.PersistentVolumeClaim) {
	c.Spec.VolumeName, c.Status.Phase = "pv-"+c.Name, v1.ClaimBound
}

func deleting(c *v1.PersistentVolumeClaim) {
	now := metav1.Now()
	c.DeletionTimestamp = &now
}

// refDropped is a claim whose namespaced dataSourceRef the API server
// dropped: its managed fields still record it (datasource.RefDropped).
func refDropped(c *v1.PersistentVolumeClaim) {
	c.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:dataSourceRef":{}}}`)}}}
}

// populator is a VolumePopulator registering group and kind.
func populator(name, group, kind string) *popv1beta1.VolumePopulator {
	return &popv1beta1.VolumePopulator{ObjectMeta: metav1.ObjectMeta{Name: name},
		SourceKind: metav1.GroupKind{Group: group, Kind: kind}}
}

// link is a VolumeSnapshotLink in test naming the snapshot namespace/name.
func link(name, namespace, snapshot string) *snapv1alpha1.VolumeSnapshotLink {
	return &snapv1alpha1.VolumeSnapshotLink{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test"},
		Spec: snapv1alpha1.VolumeSnapshotLinkSpec{Source: snapv1alpha1.VolumeSnapshotLinkSource{Namespace: namespace, Name: snapshot}}}
}

// grantFor is a ReferenceGrant "bar" in prod letting objects of kind in
// test use the object toKind/toName ("" = all of that kind) in prod.
func grantFor(fromGroup, fromKind, toGroup, toKind, toName string) referencegrant.Grant {
	return referencegrant.Grant{Namespace: "prod", Name: "bar",
		From: []referencegrant.From{{Group: fromGroup, Kind: fromKind, Namespace: "test"}},
		To:   []referencegrant.To{{Group: toGroup, Kind: toKind, Name: toName}}}
}

var (
	// aliceGrant is the KEP example's grant: claims in test may use
	// foo-backup.
	aliceGrant = grantFor("", datasource.ClaimKind, datasource.SnapshotGroup, datasource.SnapshotKind, "foo-backup")
	// linkGrant lets VolumeSnapshotLinks in test use every snapshot in prod.
	linkGrant = grantFor(datasource.SnapshotGroup, datasource.LinkKind, datasource.SnapshotGroup, datasource.SnapshotKind, "")
	// cloneGrant lets claims in test clone claims in prod.
	cloneGrant = grantFor("", datasource.ClaimKind, "", datasource.ClaimKind, "")
)

// staticRegistry is a Registry of fixed kinds, or of err.
type staticRegistry struct {
	kinds []*popv1beta1.VolumePopulator
	err   error
}

func (r staticRegistry) Registered(group, kind string) (bool, error) {
	for _, p := range r.kinds {
		if p.SourceKind == (metav1.GroupKind{Group: group, Kind: kind}) {
			return true, r.err
		}
	}
	return false, r.err
}

// staticGrants decides references with referencegrant.Decide over fixed
// grants, or, with err, as the Checker does when it cannot read them.
type staticGrants struct {
	grants []referencegrant.Grant
	err    error
}

func (g staticGrants) Check(ref referencegrant.Reference) referencegrant.Decision {
	if g.err != nil {
		return referencegrant.Decision{Reason: referencegrant.ReasonUnavailable,
			Message: fmt.Sprintf("cannot check whether %s in namespace %q may use %s %q: %v", ref.FromKind, ref.FromNamespace, ref.ToKind, ref.ToName, g.err)}
	}
	return referencegrant.Decide(g.grants, ref)
}

func (g staticGrants) Err() error { return g.err }

// staticLinks reads fixed VolumeSnapshotLinks, or err.
type staticLinks struct {
	links []*snapv1alpha1.VolumeSnapshotLink
	err   error
}

func (l staticLinks) GetLink(namespace, name string) (*snapv1alpha1.VolumeSnapshotLink, error) {
	if l.err != nil {
		return nil, l.err
	}
	for _, k := range l.links {
		if k.Namespace == namespace && k.Name == name {
			return k, nil
		}
	}
	return nil, nil
}

func (l staticLinks) Err() error { return l.err }

package property

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache/linkcachetest"
)

// The worlds of the metadata property: every tenant namespace may hold a
// ready snapshot foo-backup and a bound claim data to clone; pending claims
// restore or clone them, directly, through a VolumeSnapshotLink or across
// namespaces; grants, the feature gate and --cross-namespace-snapshot vary.
// Unlike the authorization test's worlds, the spellings are right: what
// varies is whether a use is allowed, so that metadata would show if it
// changed that.

const (
	driverName      = "csi.example.com"
	storageClass    = "fast"
	sourceClaimName = "data"
)

var (
	// linkSources are the namespaces a link names: "" is its own.
	linkSources = []string{"", "test", "prod", "dev"}
	created     = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	oneGi       = resource.MustParse("1Gi")
)

// grantObject is a ReferenceGrant and the version it is served as.
type grantObject struct {
	*gatewayv1.ReferenceGrant
	version string
}

// metaWorld is the objects of one generated world. Volumes and contents
// are cluster-scoped: tenants cannot write them, so they are never
// decorated.
type metaWorld struct {
	gate, snapshotLinks bool
	// restores are the pending claims decided; sources the claims they may
	// clone.
	restores, sources []*v1.PersistentVolumeClaim
	volumes           []*v1.PersistentVolume
	snapshots         []*snapv1.VolumeSnapshot
	contents          []*snapv1.VolumeSnapshotContent
	links             linkcachetest.Links
	grants            []grantObject
}

func newMetaWorld(r *rand.Rand) metaWorld {
	w := metaWorld{gate: r.IntN(4) > 0, snapshotLinks: r.IntN(4) > 0}
	for _, ns := range namespaces {
		if r.IntN(6) > 0 {
			w.addSnapshot(r, ns)
		}
		if r.IntN(6) > 0 {
			w.addSourceClaim(r, ns)
		}
	}
	for i := range 1 + r.IntN(3) {
		w.restores = append(w.restores, newRestore(r, i))
	}
	for i := range r.IntN(4) {
		w.links = append(w.links, linkcachetest.Link(maybe(r, "test", namespaces), "link-"+strconv.Itoa(i), pick(r, linkSources), snapshotNames[0]))
	}
	for i := range r.IntN(5) {
		w.grants = append(w.grants, w.newGrant(r, i))
	}
	return w
}

// addSnapshot adds the ready snapshot foo-backup of ns and its content,
// protected as provisioners protect a source; sometimes its deletion has
// been requested.
func (w *metaWorld) addSnapshot(r *rand.Rand, ns string) {
	content := "snapcontent-" + ns
	s := &snapv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: snapshotNames[0], UID: types.UID("snap-" + ns), CreationTimestamp: created,
			Finalizers: finalizers(datasource.Source{APIGroup: snapshotGroup, Kind: snapshotKind, Namespace: ns, Name: snapshotNames[0]})},
		Spec: snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr(sourceClaimName)}},
		Status: &snapv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: &content, ReadyToUse: ptr(r.IntN(8) > 0),
			RestoreSize: ptr(oneGi.DeepCopy())},
	}
	if r.IntN(8) == 0 {
		s.DeletionTimestamp = ptr(metav1.NewTime(created.Add(time.Hour)))
	}
	w.snapshots = append(w.snapshots, s)
	w.contents = append(w.contents, &snapv1.VolumeSnapshotContent{
		ObjectMeta: metav1.ObjectMeta{Name: content},
		Spec: snapv1.VolumeSnapshotContentSpec{Driver: driverName, DeletionPolicy: snapv1.VolumeSnapshotContentDelete,
			VolumeSnapshotRef: v1.ObjectReference{Namespace: ns, Name: s.Name, UID: s.UID}, SourceVolumeMode: ptr(v1.PersistentVolumeFilesystem)},
		Status: &snapv1.VolumeSnapshotContentStatus{SnapshotHandle: ptr("handle-" + ns), RestoreSize: ptr(oneGi.Value())},
	})
}

// finalizers are the protection finalizers of every use of src, as
// provisioners leave them on a source being restored or cloned.
func finalizers(src datasource.Source) []string {
	var out []string
	for _, u := range sourceUses(src) {
		out = append(out, u.Finalizer())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// addSourceClaim adds the bound claim data of ns and its volume.
func (w *metaWorld) addSourceClaim(r *rand.Rand, ns string) {
	pv := "pv-" + ns
	w.sources = append(w.sources, &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sourceClaimName, UID: types.UID("data-" + ns), CreationTimestamp: created,
			Finalizers:  finalizers(datasource.Source{Kind: datasource.ClaimKind, Namespace: ns, Name: sourceClaimName}),
			Annotations: map[string]string{annStorageProvisioner: driverName}},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: ptr(storageClass), VolumeName: pv,
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: oneGi}}},
		Status: v1.PersistentVolumeClaimStatus{Phase: pick(r, []v1.PersistentVolumeClaimPhase{v1.ClaimBound, v1.ClaimBound, v1.ClaimBound, v1.ClaimPending})},
	})
	w.volumes = append(w.volumes, &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pv, Annotations: map[string]string{annProvisionedBy: driverName}},
		Spec: v1.PersistentVolumeSpec{StorageClassName: storageClass, Capacity: v1.ResourceList{v1.ResourceStorage: oneGi},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driverName, VolumeHandle: "vol-" + ns}},
			ClaimRef:               &v1.ObjectReference{Namespace: ns, Name: sourceClaimName, UID: types.UID("data-" + ns)}},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	})
}

// newRestore is a pending claim, mostly in test, annotated by the PV
// controller for this driver, restoring or cloning from its own or another
// namespace, directly or through a link; or without a source, or with a
// dataSourceRef the API server dropped.
func newRestore(r *rand.Rand, i int) *v1.PersistentVolumeClaim {
	ns := "test"
	if r.IntN(4) == 0 {
		ns = pick(r, namespaces)
	}
	request := oneGi
	if r.IntN(10) == 0 {
		request = resource.MustParse("512Mi")
	}
	c := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "restore-" + strconv.Itoa(i), UID: types.UID("restore-" + strconv.Itoa(i)),
			CreationTimestamp: created},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: ptr(storageClass), AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: request}}},
	}
	// The PV controller hands the claim to this driver with both
	// annotations (before Kubernetes 1.23 with the beta one only), or has
	// not yet.
	switch r.IntN(6) {
	case 0:
	case 1:
		c.Annotations = map[string]string{annBetaStorageProvisioner: driverName}
	default:
		c.Annotations = map[string]string{annStorageProvisioner: driverName, annBetaStorageProvisioner: driverName}
	}
	var target *string
	switch r.IntN(4) {
	case 0: // absent: the claim's own
	case 1:
		target = ptr(ns)
	default:
		target = ptr(pick(r, namespaces))
	}
	switch r.IntN(10) {
	case 0: // no source: an empty volume
	case 1:
		c.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:dataSourceRef":{}}}`)}}}
	case 2:
		c.Spec.DataSource = &v1.TypedLocalObjectReference{APIGroup: ptr(snapshotGroup), Kind: snapshotKind, Name: snapshotNames[0]}
	case 3, 4:
		c.Spec.DataSourceRef = &v1.TypedObjectReference{Kind: datasource.ClaimKind, Name: sourceClaimName, Namespace: target}
	case 5, 6:
		link := "link-" + strconv.Itoa(r.IntN(4))
		c.Spec.DataSourceRef = &v1.TypedObjectReference{APIGroup: ptr(snapshotGroup), Kind: datasource.LinkKind, Name: link}
	default:
		c.Spec.DataSourceRef = &v1.TypedObjectReference{APIGroup: ptr(snapshotGroup), Kind: snapshotKind, Name: snapshotNames[0], Namespace: target}
	}
	return c
}

// newGrant is a grant in a tenant namespace from claims or links of one
// to snapshots or claims, by name or for the whole namespace: two times in
// three one that some claim or link of w asks for, often enough to allow.
func (w metaWorld) newGrant(r *rand.Rand, i int) grantObject {
	rg := &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: pick(r, namespaces), Name: "grant-" + strconv.Itoa(i)}}
	if r.IntN(8) == 0 {
		rg.DeletionTimestamp = ptr(metav1.NewTime(created.Add(time.Hour)))
	}
	from := gatewayv1.ReferenceGrantFrom{Kind: datasource.ClaimKind, Namespace: gatewayv1.Namespace(pick(r, namespaces))}
	to := gatewayv1.ReferenceGrantTo{Group: snapshotGroup, Kind: snapshotKind}
	if r.IntN(2) == 0 {
		from.Group, from.Kind = snapshotGroup, datasource.LinkKind
	}
	if r.IntN(3) == 0 {
		to.Group, to.Kind = "", datasource.ClaimKind
	}
	if r.IntN(3) > 0 {
		w.aim(r, rg, &from, &to)
	}
	if r.IntN(2) == 0 {
		to.Name = ptr(gatewayv1.ObjectName(pick(r, []string{snapshotNames[0], sourceClaimName})))
	}
	rg.Spec.From, rg.Spec.To = []gatewayv1.ReferenceGrantFrom{from}, []gatewayv1.ReferenceGrantTo{to}
	return grantObject{ReferenceGrant: rg, version: pick(r, []string{"v1", "v1beta1"})}
}

// aim makes the grant rg the one a claim of w, or a link, asks for.
func (w metaWorld) aim(r *rand.Rand, rg *gatewayv1.ReferenceGrant, from *gatewayv1.ReferenceGrantFrom, to *gatewayv1.ReferenceGrantTo) {
	if len(w.links) > 0 && r.IntN(3) == 0 {
		l := pick(r, w.links)
		rg.Namespace = l.SourceNamespace()
		*from = gatewayv1.ReferenceGrantFrom{Group: snapshotGroup, Kind: datasource.LinkKind, Namespace: gatewayv1.Namespace(l.Namespace)}
		*to = gatewayv1.ReferenceGrantTo{Group: snapshotGroup, Kind: snapshotKind}
		return
	}
	c := pick(r, w.restores)
	ref := c.Spec.DataSourceRef
	if ref == nil || ref.Namespace == nil {
		return
	}
	rg.Namespace = *ref.Namespace
	*from = gatewayv1.ReferenceGrantFrom{Kind: datasource.ClaimKind, Namespace: gatewayv1.Namespace(c.Namespace)}
	*to = gatewayv1.ReferenceGrantTo{Group: gatewayv1.Group(ptrValue(ref.APIGroup)), Kind: gatewayv1.Kind(ref.Kind)}
}

func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// decoration is one annotation or label a tenant set.
type decoration struct {
	object     string
	label      bool
	key, value string
}

func (d decoration) String() string {
	what := "annotation"
	if d.label {
		what = "label"
	}
	return fmt.Sprintf("%s %s %q: %q", d.object, what, d.key, d.value)
}

// decorations returns metadata tenants set on their objects in w: on
// most claims to restore, on half the other objects.
func (w metaWorld) decorations(r *rand.Rand) []decoration {
	var decorations []decoration
	for _, name := range w.tenantObjects().names {
		in4 := 2
		if strings.HasPrefix(name, "PersistentVolumeClaim ") && strings.Contains(name, "/restore-") {
			in4 = 3
		}
		if r.IntN(4) < in4 {
			decorations = append(decorations, tenantMetadata(r, name)...)
		}
	}
	return decorations
}

// with returns a copy of w with decorations set.
func (w metaWorld) with(decorations []decoration) metaWorld {
	d := w.deepCopy()
	objects := d.tenantObjects().byName
	for _, dec := range decorations {
		obj := objects[dec.object]
		set, get := obj.SetAnnotations, obj.GetAnnotations
		if dec.label {
			set, get = obj.SetLabels, obj.GetLabels
		}
		m := get()
		if m == nil {
			m = map[string]string{}
		}
		m[dec.key] = dec.value
		set(m)
	}
	return d
}

// objectSet is objects by name ("VolumeSnapshot prod/foo-backup"), and
// their names in order.
type objectSet struct {
	byName map[string]metav1.Object
	names  []string
}

func (s *objectSet) add(kind string, obj metav1.Object) {
	name := kind + " " + key(obj)
	s.byName[name] = obj
	s.names = append(s.names, name)
}

// tenantObjects are the objects of w that tenants write.
func (w metaWorld) tenantObjects() objectSet {
	s := objectSet{byName: map[string]metav1.Object{}}
	for _, c := range slices.Concat(w.restores, w.sources) {
		s.add("PersistentVolumeClaim", c)
	}
	for _, o := range w.snapshots {
		s.add("VolumeSnapshot", o)
	}
	for _, l := range w.links {
		s.add("VolumeSnapshotLink", l)
	}
	for _, g := range w.grants {
		s.add("ReferenceGrant", g)
	}
	return s
}

func (w metaWorld) deepCopy() metaWorld {
	d := w
	d.restores, d.sources = deepCopies(w.restores), deepCopies(w.sources)
	d.volumes, d.snapshots, d.contents = deepCopies(w.volumes), deepCopies(w.snapshots), deepCopies(w.contents)
	d.links = deepCopies(w.links)
	d.grants = make([]grantObject, len(w.grants))
	for i, g := range w.grants {
		d.grants[i] = grantObject{ReferenceGrant: g.DeepCopy(), version: g.version}
	}
	return d
}

func deepCopies[T interface{ DeepCopy() T }](objs []T) []T {
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
	}
	return out
}

func (w metaWorld) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gate %t, --cross-namespace-snapshot %t", w.gate, w.snapshotLinks)
	for _, c := range w.restores {
		ref, legacy := c.Spec.DataSourceRef, c.Spec.DataSource
		switch {
		case ref != nil:
			fmt.Fprintf(&b, "\n  claim %s/%s dataSourceRef {apiGroup: %s, kind: %s, namespace: %s, name: %s}",
				c.Namespace, c.Name, quoted(ref.APIGroup), ref.Kind, quoted(ref.Namespace), ref.Name)
		case legacy != nil:
			fmt.Fprintf(&b, "\n  claim %s/%s dataSource {kind: %s, name: %s}", c.Namespace, c.Name, legacy.Kind, legacy.Name)
		default:
			fmt.Fprintf(&b, "\n  claim %s/%s without source (dropped: %t), requests %s", c.Namespace, c.Name, datasource.RefDropped(c), c.Spec.Resources.Requests.Storage())
		}
	}
	for _, s := range w.snapshots {
		fmt.Fprintf(&b, "\n  snapshot %s/%s ready %t deleting %t", s.Namespace, s.Name, *s.Status.ReadyToUse, s.DeletionTimestamp != nil)
	}
	for _, c := range w.sources {
		fmt.Fprintf(&b, "\n  source claim %s/%s %s", c.Namespace, c.Name, c.Status.Phase)
	}
	for _, l := range w.links {
		fmt.Fprintf(&b, "\n  link %s/%s -> %s/%s", l.Namespace, l.Name, l.SourceNamespace(), l.Spec.Source.Name)
	}
	for _, g := range w.grants {
		fmt.Fprintf(&b, "\n  grant %s %s/%s terminating %t from %v to %v", g.version, g.Namespace, g.Name, g.DeletionTimestamp != nil,
			g.Spec.From, convertGrant(g.ReferenceGrant, g.version).To)
	}
	return b.String()
}

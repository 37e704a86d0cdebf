package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	popv1beta1 "github.com/xns-csi/csi-provisioner/pkg/apis/populator/v1beta1"
	generated "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// bench is the control plane and the admin's clients, fast enough to
// create thousands of objects.
type bench struct {
	ctx     context.Context
	env     *localenv.Env
	kube    kubernetes.Interface
	gateway gatewayclientset.Interface
	api     generated.Interface
}

// start starts the control plane alone (no sidecar, no driver: only the
// validators read the claims) with the ReferenceGrant and VolumePopulator
// CRDs, then stops kube-controller-manager: its PV binder would annotate
// and tell every pending claim, and each such update makes upstream's
// validator tell the claim again. On error the returned bench, if not nil,
// must still be stopped.
func start(ctx context.Context, root, work string) (*bench, error) {
	c, err := cluster.Start(ctx, cluster.Config{BinDir: filepath.Join(root, ".cache", "bin"), WorkDir: work})
	if err != nil {
		return nil, err
	}
	b := &bench{ctx: ctx, env: &localenv.Env{Root: root, Work: work, Cluster: c}}
	c.Process("kube-controller-manager").Stop(10 * time.Second)
	config, err := c.RESTConfig(cluster.Admin)
	if err != nil {
		return b, err
	}
	config.QPS, config.Burst = 1000, 2000
	if b.kube, err = kubernetes.NewForConfig(config); err != nil {
		return b, err
	}
	if b.gateway, err = gatewayclientset.NewForConfig(config); err != nil {
		return b, err
	}
	if b.api, err = generated.NewForConfig(config); err != nil {
		return b, err
	}
	if err := b.env.InstallCRDs(ctx, "gateway.networking.k8s.io_referencegrants.yaml"); err != nil {
		return b, err
	}
	return b, b.env.InstallPopulatorCRD(ctx)
}

// upstreamVersion is the release of the upstream validator binary.
func (b *bench) upstreamVersion() (string, error) {
	out, err := exec.CommandContext(b.ctx, b.env.UpstreamValidatorBinary(), "--version").Output()
	fields := strings.Fields(string(out)) // "<path> <version>"
	if err != nil || len(fields) == 0 {
		return "", fmt.Errorf("--version: %w", errors.Join(err, errors.New(string(out))))
	}
	return fields[len(fields)-1], nil
}

// kind is one kind of claim of the mix.
type kind struct {
	name string
	// group, kind and name of the claim's dataSourceRef; none if kind is "".
	group, kind, source string
	// elsewhere, if not 0, puts the source that many namespaces further.
	elsewhere int
}

const (
	snapshotGroup  = "snapshot.storage.k8s.io"
	populatorGroup = "hello.example.com"
	populatorKind  = "Hello" // a VolumePopulator registers it
)

var (
	none         = kind{name: "no data source"}
	clone        = kind{"a claim in its namespace", "", "PersistentVolumeClaim", "source", 0}
	snapshot     = kind{"a snapshot in its namespace", snapshotGroup, "VolumeSnapshot", "snap", 0}
	registered   = kind{"a registered populator kind", populatorGroup, populatorKind, "hello", 0}
	unregistered = kind{"a kind no VolumePopulator registers", "nothing.example.com", "Nothing", "x", 0}
	// The next namespace grants claims of this one its snapshots; the
	// one after next grants the next one's.
	granted   = kind{"a snapshot in another namespace, granted", snapshotGroup, "VolumeSnapshot", "snap", 1}
	ungranted = kind{"a snapshot in another namespace, no grant", snapshotGroup, "VolumeSnapshot", "snap", 2}
)

// mix is the claims' kinds, claim i being of kind mix[i%len(mix)]: 60%
// without a data source, 16% clones, 8% snapshots, and 4% of each other
// kind. The rare kinds come first, so that a few claims have them all.
var mix = []kind{unregistered, ungranted, granted, registered, snapshot, snapshot, clone, clone, clone, clone,
	none, none, none, none, none, none, none, none, none, none, none, none, none, none, none}

// ref is the dataSourceRef of a claim of kind k in namespace ns of f.
func (k kind) ref(f *fixture, ns int) *v1.TypedObjectReference {
	if k.kind == "" {
		return nil
	}
	r := &v1.TypedObjectReference{Kind: k.kind, Name: k.source}
	if k.group != "" {
		r.APIGroup = ptr.To(k.group)
	}
	if k.elsewhere != 0 {
		r.Namespace = ptr.To(f.ns(ns + k.elsewhere))
	}
	return r
}

// fixture is what fill created.
type fixture struct {
	namespaces int
	// claims are the claims' namespace/name, their kinds counted in kinds.
	claims []claimName
	kinds  map[string]int
	grants int
}

type claimName struct{ namespace, name string }

// ns names namespace i (modulo their number).
func (f *fixture) ns(i int) string { return fmt.Sprintf("bench-val-%02d", i%f.namespaces) }

// fill creates the namespaces, a StorageClass nobody provisions, the
// VolumePopulator of populatorKind, the claims (consecutive ones share a
// namespace) and the grants: in each namespace one that lets the previous
// namespace's claims use its snapshots, the rest naming other namespaces.
func (b *bench) fill(claims, grants, namespaces int) (*fixture, error) {
	f := &fixture{namespaces: namespaces, kinds: map[string]int{}, grants: grants}
	class := "bench-unserved"
	if _, err := b.kube.StorageV1().StorageClasses().Create(b.ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "unserved.example.com"}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	if _, err := b.api.PopulatorV1beta1().VolumePopulators().Create(b.ctx, &popv1beta1.VolumePopulator{
		ObjectMeta: metav1.ObjectMeta{Name: "hello"}, SourceKind: metav1.GroupKind{Group: populatorGroup, Kind: populatorKind}},
		metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	for i := range namespaces {
		if _, err := b.kube.CoreV1().Namespaces().Create(b.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns(i)}},
			metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	perNamespace := (claims + namespaces - 1) / namespaces
	for i := range claims {
		k := mix[i%len(mix)]
		f.claims = append(f.claims, claimName{f.ns(i / perNamespace), fmt.Sprintf("claim-%05d", i)})
		f.kinds[k.name]++
	}
	logf("creating %d claims and %d ReferenceGrants in %d namespaces", claims, grants, namespaces)
	err := parallel(b.ctx, claims, func(i int) error {
		c := f.claims[i]
		_, err := b.kube.CoreV1().PersistentVolumeClaims(c.namespace).Create(b.ctx, &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: c.namespace},
			Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:     v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
				DataSourceRef: mix[i%len(mix)].ref(f, i/perNamespace)},
		}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	return f, parallel(b.ctx, grants, func(i int) error {
		ns := i % namespaces
		grant := &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("grant-%05d", i), Namespace: f.ns(ns)}}
		to := gatewayv1.ReferenceGrantTo{Group: snapshotGroup, Kind: "VolumeSnapshot"}
		from := gatewayv1.Namespace(f.ns(ns + namespaces - 1))
		if i >= namespaces { // not the neighbor's: from elsewhere, for one snapshot
			from, to.Name = gatewayv1.Namespace(fmt.Sprintf("elsewhere-%05d", i)), ptr.To(gatewayv1.ObjectName(fmt.Sprintf("snap-%05d", i)))
		}
		grant.Spec = gatewayv1.ReferenceGrantSpec{From: []gatewayv1.ReferenceGrantFrom{{Kind: "PersistentVolumeClaim", Namespace: from}},
			To: []gatewayv1.ReferenceGrantTo{to}}
		_, err := b.gateway.GatewayV1().ReferenceGrants(grant.Namespace).Create(b.ctx, grant, metav1.CreateOptions{})
		return err
	})
}

// parallel calls do for 0..n-1 with 16 workers and returns the first
// error.
func parallel(ctx context.Context, n int, do func(i int) error) error {
	work := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if err := do(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

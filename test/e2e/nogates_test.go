//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	linkclientset "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

const linkKind = "VolumeSnapshotLink"

// TestE2ENoAlphaGates runs KEP-3294's Story 1 on a control plane like a
// managed cluster's: kube-apiserver and kube-controller-manager without the
// alpha gate CrossNamespaceVolumeDataSource, so spec.dataSourceRef.namespace
// does not survive. The restore goes through a VolumeSnapshotLink
// (--cross-namespace-snapshot), which needs only AnyVolumeDataSource.
//
// It starts a control plane of its own, after TestE2E's cases, and points
// the shared helpers at it (world) while it runs; its cases are not
// parallel.
func TestE2ENoAlphaGates(t *testing.T) {
	env := ownWorld(t, "nogates", localenv.Config{NoAlphaGates: true, SidecarArgs: []string{"--cross-namespace-snapshot"}})
	config, err := env.Cluster.RESTConfig(cluster.Admin)
	if err != nil {
		t.Fatal(err)
	}
	links, err := linkclientset.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	ensureGrantCRD(t)
	l := linkTest{links: links}
	l.crdInstalledLater(t, env)
	// The subtests below need the CRD, also when -run leaves out the one
	// above, which installs it (server-side apply: a second time changes
	// nothing).
	if err := env.InstallProjectCRDs(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"Story1ThroughALink", l.story1},
		{"LinkWithoutGrant", l.withoutGrant},
		{"RestartWithPendingRestoreThroughALink", l.restartWithPendingRestore},
		{"NamespacedReferenceDropped", testNamespacedReferenceDropped},
	} {
		t.Run(c.name, c.run)
	}
}

type linkTest struct {
	links linkclientset.Interface
}

// crdInstalledLater: the sidecar started before the VolumeSnapshotLink CRD
// existed; a claim naming a link is told so, and binds once the CRD and the
// link exist, without a restart.
func (l linkTest) crdInstalledLater(t *testing.T, env *localenv.Env) {
	t.Run("LinkCRDInstalledLater", func(t *testing.T) {
		class := storageClass(t, "link-crd", localenv.LocalDriver)
		app := namespace(t, "app")
		sourceWithSnapshot(t, world.Local, app, class, "snap", "local data")
		createPVC(t, app, "copy", class, throughLink("snap-link"))
		waitEvent(t, app, "copy", "ProvisioningFailed", "is the CRD installed?")
		staysPending(t, app, "copy")

		if err := env.InstallProjectCRDs(ctxFor(t)); err != nil {
			t.Fatal(err)
		}
		l.createLink(t, app, "snap-link", "", "snap")
		if got := readData(t, world.Local, waitBound(t, app, "copy")); got != "local data" {
			t.Errorf("restored data = %q, want %q", got, "local data")
		}
	})
}

// story1 is KEP-3294's Story 1 in its link form (deploy/examples/story1-link):
// Alice grants links in test the use of prod's foo-backup, Bob links it and
// restores it into foo-testing-via-link.
func (l linkTest) story1(t *testing.T) {
	class := storageClass(t, "story1-link", localenv.LocalDriver)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, world.Local, prod, class, "foo-backup", "production data")
	linkGrant(t, prod, "bar-links", test, "foo-backup")
	l.createLink(t, test, "foo-link", prod, "foo-backup")
	createPVC(t, test, "foo-testing-via-link", class, throughLink("foo-link"))

	pv := waitBound(t, test, "foo-testing-via-link")
	if got := readData(t, world.Local, pv); got != "production data" {
		t.Errorf("foo-testing-via-link holds %q, want the data of prod's volume", got)
	}
	l.waitCondition(t, test, "foo-link", snapv1alpha1.ConditionResolved, metav1.ConditionTrue)
	l.waitCondition(t, test, "foo-link", snapv1alpha1.ConditionAllowed, metav1.ConditionTrue)
	waitFor(t, "the snapshot's protection finalizer to be released", func(ctx context.Context) bool {
		s, err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Get(ctx, "foo-backup", metav1.GetOptions{})
		return err == nil && !slices.Contains(s.Finalizers, datasource.LinkSnapshotFinalizer)
	})
}

// withoutGrant: a link to another namespace's snapshot without a grant
// there provisions nothing; the claim's event and the link's Allowed
// condition name the grant that is missing, and its Resolved condition
// does not say whether the snapshot exists (issue 21).
func (l linkTest) withoutGrant(t *testing.T) {
	class := storageClass(t, "link-nogrant", localenv.LocalDriver)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, world.Local, prod, class, "foo-backup", "production data")
	grant(t, prod, "claims-only", test, "foo-backup") // for namespaced claims: does not cover links
	l.createLink(t, test, "foo-link", prod, "foo-backup")
	createPVC(t, test, "refused", class, throughLink("foo-link"))

	want := fmt.Sprintf("no ReferenceGrant in namespace %q allows VolumeSnapshotLinks in namespace %q", prod, test)
	waitEvent(t, test, "refused", "ProvisioningFailed", want)
	cond := l.waitCondition(t, test, "foo-link", snapv1alpha1.ConditionAllowed, metav1.ConditionFalse)
	if cond.Reason != "ReferenceGrantMissing" {
		t.Errorf("Allowed condition reason = %q, want ReferenceGrantMissing", cond.Reason)
	}
	if cond := l.waitCondition(t, test, "foo-link", snapv1alpha1.ConditionResolved, metav1.ConditionUnknown); cond.Reason != "ReferenceGrantMissing" {
		t.Errorf("Resolved condition reason = %q, want ReferenceGrantMissing", cond.Reason)
	}
	staysPending(t, test, "refused")
}

// testNamespacedReferenceDropped: without the alpha gate the API server
// drops a spec.dataSourceRef that names a namespace, whole, so the claim
// reaches the provisioner as one for an empty volume. It is not
// provisioned (an empty volume where data was asked for would be a silent
// loss), and its event says why and what to use instead.
func testNamespacedReferenceDropped(t *testing.T) {
	class := storageClass(t, "dropped", localenv.LocalDriver)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, world.Local, prod, class, "foo-backup", "production data")
	grant(t, prod, "bar", test, "foo-backup")
	createPVC(t, test, "foo-testing", class, restoring(prod, "foo-backup"))

	claim, err := world.Kube.CoreV1().PersistentVolumeClaims(test).Get(ctxFor(t), "foo-testing", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if claim.Spec.DataSourceRef != nil || claim.Spec.DataSource != nil {
		t.Fatalf("dataSourceRef = %+v, want it dropped by an API server without the alpha gate", claim.Spec.DataSourceRef)
	}
	waitEvent(t, test, "foo-testing", "DataSourceRefDropped", "restore through a VolumeSnapshotLink")
	staysPending(t, test, "foo-testing")
}

func throughLink(name string) pvcOption { return populatedBy(snapshotGroup, linkKind, name) }

func (l linkTest) createLink(t *testing.T, namespace, name, snapNamespace, snapshot string) {
	t.Helper()
	link := &snapv1alpha1.VolumeSnapshotLink{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: snapv1alpha1.VolumeSnapshotLinkSpec{Source: snapv1alpha1.VolumeSnapshotLinkSource{Namespace: snapNamespace, Name: snapshot}}}
	if _, err := l.links.SnapshotV1alpha1().VolumeSnapshotLinks(namespace).Create(ctxFor(t), link, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitCondition waits until the link's condition kind has status, and
// returns it.
func (l linkTest) waitCondition(t *testing.T, namespace, name, kind string, status metav1.ConditionStatus) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	err := wait.PollUntilContextTimeout(ctxFor(t), 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		link, err := l.links.SnapshotV1alpha1().VolumeSnapshotLinks(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		c := meta.FindStatusCondition(link.Status.Conditions, kind)
		if c == nil || c.Status != status {
			return false, nil
		}
		got = *c
		return true, nil
	})
	if err != nil {
		t.Fatalf("link %s/%s: no condition %s=%s: %v", namespace, name, kind, status, err)
	}
	return got
}

// linkGrant creates a ReferenceGrant in namespace allowing the
// VolumeSnapshotLinks of fromNamespace to name snapshot.
func linkGrant(t *testing.T, namespace, name, fromNamespace, snapshot string) {
	t.Helper()
	n := gatewayv1.ObjectName(snapshot)
	g := &gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: snapshotGroup, Kind: linkKind, Namespace: gatewayv1.Namespace(fromNamespace)}},
			To:   []gatewayv1.ReferenceGrantTo{{Group: snapshotGroup, Kind: "VolumeSnapshot", Name: &n}},
		},
	}
	if _, err := world.Gateway.GatewayV1().ReferenceGrants(namespace).Create(ctxFor(t), g, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// ownWorld starts an environment of its own, set as cfg says (Root and
// Work are filled in: a test directory, kept with E2E_KEEP), and points the
// shared helpers at it (world) until the test ends. Its cases must not be
// parallel with others.
func ownWorld(t *testing.T, name string, cfg localenv.Config) *localenv.Env {
	t.Helper()
	var err error
	if cfg.Root, err = localenv.RepoRoot(); err != nil {
		t.Fatal(err)
	}
	cfg.Work = t.TempDir()
	if os.Getenv("E2E_KEEP") != "" {
		if cfg.Work, err = os.MkdirTemp("", "csi-provisioner-e2e-"+name+"-"); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("e2e: state and logs of the %s cluster in %s", name, cfg.Work)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := localenv.Start(ctx, cfg)
	if env != nil {
		t.Cleanup(env.Stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	shared := world
	world = env
	t.Cleanup(func() { world = shared })
	return env
}

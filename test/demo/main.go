// Command demo plays KEP-3294's Story 1 on a real local control plane with
// the local CSI driver and the csi-provisioner sidecar: Alice's snapshot in
// prod, Bob's claim in test waiting for a ReferenceGrant, Alice's grant, the
// claim bound and the data restored. Run it with `make demo`.
//
// With -link (`make demo LINK=1`) it plays the same story through a
// VolumeSnapshotLink, on a control plane without alpha gates: Bob links the
// snapshot in test and his claim names the link; the link's conditions show
// why the claim waits.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	linkclientset "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

const driverName = "csi.example.com" // the driver of deploy/examples/storageclass.yaml

func main() {
	keep := flag.Bool("keep", false, "keep the cluster running after the story, until Ctrl-C")
	link := flag.Bool("link", false, "restore through a VolumeSnapshotLink, on a control plane without alpha gates")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := namespaced
	if *link {
		f = throughLink
	}
	if err := run(ctx, f, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

// form is one way Bob's claim names Alice's snapshot: the control plane and
// sidecar it needs, and its example manifests.
type form struct {
	title string
	// config has the form's control plane and sidecar settings.
	config localenv.Config
	// dir under deploy/examples holds pvc.yaml, referencegrant.yaml and,
	// for a link, link.yaml.
	dir string
	// claim is Bob's claim, grant Alice's ReferenceGrant and link, if set,
	// Bob's VolumeSnapshotLink, all named as in dir.
	claim, grant, link string
	// makeVars are the make variables that play this form.
	makeVars string
}

var (
	namespaced = form{
		title: "KEP-3294 Story 1: provisioning a volume from a snapshot in another namespace",
		dir:   "story1", claim: "foo-testing", grant: "bar",
	}
	throughLink = form{
		title:  "KEP-3294 Story 1 through a VolumeSnapshotLink, on a control plane without alpha gates",
		config: localenv.Config{NoAlphaGates: true, SidecarArgs: []string{"--cross-namespace-snapshot"}},
		dir:    "story1-link", claim: "foo-testing-via-link", grant: "bar-links", link: "foo-link", makeVars: " LINK=1",
	}
)

func run(ctx context.Context, f form, keep bool) error {
	root, err := localenv.RepoRoot()
	if err != nil {
		return err
	}
	work := filepath.Join(root, ".cache", "demo")
	_ = os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	s := &story{ctx: ctx, root: root, form: f, start: time.Now()}
	s.title(f.title)
	s.step("Starting a local cluster (logs in %s)", work)
	config := f.config
	config.Root, config.Work, config.DriverName = root, work, driverName
	config.Progress = func(what string) { s.say("  starting %s", what) }
	if config.NoAlphaGates {
		s.say("  kube-apiserver and kube-controller-manager without the alpha gate CrossNamespaceVolumeDataSource, as managed clusters")
	}
	env, err := localenv.Start(ctx, config)
	if env != nil {
		defer func() {
			s.step("Stopping everything the demo started")
			env.Stop()
		}()
	}
	if err != nil {
		return err
	}
	s.env = env
	if f.link != "" {
		if s.links, err = linkClient(env); err != nil {
			return err
		}
	}
	if err := s.play(); err != nil {
		return err
	}
	if keep {
		s.title("The cluster keeps running. Try your own YAML:")
		fmt.Printf("  export KUBECONFIG=%s\n  kubectl get pvc -A\n  kubectl describe pvc -n test %s\n", env.Cluster.Kubeconfig(cluster.Admin), f.claim)
		if f.link != "" {
			fmt.Println("  kubectl get volumesnapshotlinks -n test")
		}
		fmt.Println("Press Ctrl-C to stop it.")
		<-ctx.Done()
	} else {
		fmt.Printf("\nTo keep the cluster running and try your own YAML: make demo%s KEEP=1\n", f.makeVars)
		if f.link == "" {
			fmt.Println("The same story through a VolumeSnapshotLink, without alpha gates: make demo LINK=1")
		}
	}
	return nil
}

func linkClient(env *localenv.Env) (linkclientset.Interface, error) {
	config, err := env.Cluster.RESTConfig(cluster.Admin)
	if err != nil {
		return nil, err
	}
	return linkclientset.NewForConfig(config)
}

// story prints the steps and runs them.
type story struct {
	ctx   context.Context
	root  string
	form  form
	env   *localenv.Env
	links linkclientset.Interface // for the link form
	start time.Time
	n     int
}

func (s *story) play() error {
	examples := filepath.Join(s.root, "deploy", "examples")
	story1, dir := filepath.Join(examples, "story1"), filepath.Join(examples, s.form.dir)
	s.step("Namespaces prod (Alice) and test (Bob), and StorageClass csi-example")
	if err := s.apply(filepath.Join(story1, "namespaces.yaml"), filepath.Join(examples, "storageclass.yaml")); err != nil {
		return err
	}

	s.step("Alice's PVC prod/foo, with data written into its volume")
	if err := s.sourceVolume("hello from prod, " + time.Now().Format(time.RFC1123)); err != nil {
		return err
	}

	s.step("Alice takes VolumeSnapshot prod/foo-backup (%s)", rel(s.root, filepath.Join(story1, "source.yaml")))
	if err := s.apply(filepath.Join(story1, "source.yaml")); err != nil {
		return err
	}
	if err := s.waitFor("snapshot ready", func(ctx context.Context) bool {
		snap, err := s.env.Snaps.SnapshotV1().VolumeSnapshots("prod").Get(ctx, "foo-backup", metav1.GetOptions{})
		return err == nil && snap.Status != nil && snap.Status.ReadyToUse != nil && *snap.Status.ReadyToUse
	}); err != nil {
		return err
	}
	s.say("  prod/foo-backup is ready to use")

	s.step("The ReferenceGrant CRD (gateway-api %s)", "config/crd/standard")
	if err := s.env.InstallCRDs(s.ctx, "gateway.networking.k8s.io_referencegrants.yaml"); err != nil {
		return err
	}
	if err := s.bobsLink(dir); err != nil {
		return err
	}

	claim := "test/" + s.form.claim
	s.step("Bob's PVC %s restores prod/foo-backup (%s)", claim, rel(s.root, filepath.Join(dir, "pvc.yaml")))
	if err := s.apply(filepath.Join(dir, "pvc.yaml")); err != nil {
		return err
	}
	if err := s.waitFor("the sidecar's event", func(ctx context.Context) bool {
		return s.event("test", s.form.claim, "no ReferenceGrant") != ""
	}); err != nil {
		return err
	}
	s.say("  status: %s", s.phase("test", s.form.claim))
	s.say("  event:  %s", s.event("test", s.form.claim, "no ReferenceGrant"))
	if err := s.showLink(metav1.ConditionFalse); err != nil {
		return err
	}

	s.step("Alice grants it: ReferenceGrant prod/%s (%s)", s.form.grant, rel(s.root, filepath.Join(dir, "referencegrant.yaml")))
	granted := time.Now()
	if err := s.apply(filepath.Join(dir, "referencegrant.yaml")); err != nil {
		return err
	}
	if err := s.waitFor(claim+" to bind", func(ctx context.Context) bool {
		return s.phase("test", s.form.claim) == v1.ClaimBound
	}); err != nil {
		return err
	}
	s.say("  %s is Bound %.1fs after the grant", claim, time.Since(granted).Seconds())
	if err := s.restoredData(); err != nil {
		return err
	}
	if err := s.showLink(metav1.ConditionTrue); err != nil {
		return err
	}

	s.step("The sidecar's cross_namespace_* metrics")
	return s.metrics()
}

// bobsLink installs the VolumeSnapshotLink CRD and applies Bob's link, in
// the link form.
func (s *story) bobsLink(dir string) error {
	if s.form.link == "" {
		return nil
	}
	s.step("The VolumeSnapshotLink CRD (%s)", rel(s.root, filepath.Join(s.root, "deploy", "crds", "generated")))
	if err := s.env.InstallProjectCRDs(s.ctx); err != nil {
		return err
	}
	s.step("Bob links prod/foo-backup into test: VolumeSnapshotLink test/%s (%s)", s.form.link, rel(s.root, filepath.Join(dir, "link.yaml")))
	return s.apply(filepath.Join(dir, "link.yaml"))
}

// showLink waits until Bob's link is Allowed=allowed and prints it as
// kubectl lists it, and its conditions; nothing in the namespaced form.
func (s *story) showLink(allowed metav1.ConditionStatus) error {
	if s.form.link == "" {
		return nil
	}
	var conditions []metav1.Condition
	if err := s.waitFor("the link's Allowed condition", func(ctx context.Context) bool {
		link, err := s.links.SnapshotV1alpha1().VolumeSnapshotLinks("test").Get(ctx, s.form.link, metav1.GetOptions{})
		if err != nil {
			return false
		}
		conditions = link.Status.Conditions
		return meta.IsStatusConditionPresentAndEqual(conditions, snapv1alpha1.ConditionAllowed, allowed)
	}); err != nil {
		return err
	}
	out, err := s.env.Cluster.Kubectl(s.ctx, "get", "volumesnapshotlinks", "-n", "test")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		s.say("  kubectl: %s", line)
	}
	for _, c := range conditions {
		s.say("  link condition %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	return nil
}

// restoredData prints what Bob's volume holds.
func (s *story) restoredData() error {
	claim, err := s.env.Kube.CoreV1().PersistentVolumeClaims("test").Get(s.ctx, s.form.claim, metav1.GetOptions{})
	if err != nil {
		return err
	}
	pv, err := s.env.Kube.CoreV1().PersistentVolumes().Get(s.ctx, claim.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(s.env.Local.VolumeDir(pv.Spec.CSI.VolumeHandle), "data.txt"))
	if err != nil {
		return err
	}
	s.say("  its volume %s contains: %q", pv.Spec.CSI.VolumeHandle, strings.TrimSpace(string(data)))
	return nil
}

func (s *story) sourceVolume(content string) error {
	class := "csi-example"
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "prod"},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &class,
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Mi")}}},
	}
	if _, err := s.env.Kube.CoreV1().PersistentVolumeClaims("prod").Create(s.ctx, claim, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := s.waitFor("prod/foo to bind", func(context.Context) bool { return s.phase("prod", "foo") == v1.ClaimBound }); err != nil {
		return err
	}
	bound, err := s.env.Kube.CoreV1().PersistentVolumeClaims("prod").Get(s.ctx, "foo", metav1.GetOptions{})
	if err != nil {
		return err
	}
	pv, err := s.env.Kube.CoreV1().PersistentVolumes().Get(s.ctx, bound.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	dir := s.env.Local.VolumeDir(pv.Spec.CSI.VolumeHandle)
	s.say("  wrote %q into volume %s", content, pv.Spec.CSI.VolumeHandle)
	return os.WriteFile(filepath.Join(dir, "data.txt"), []byte(content+"\n"), 0o644)
}

func (s *story) apply(files ...string) error {
	for _, f := range files {
		out, err := s.env.Cluster.Kubectl(s.ctx, "apply", "--server-side", "-f", f)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			s.say("  kubectl: %s", line)
		}
	}
	return nil
}

func (s *story) phase(namespace, name string) v1.PersistentVolumeClaimPhase {
	c, err := s.env.Kube.CoreV1().PersistentVolumeClaims(namespace).Get(s.ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return c.Status.Phase
}

func (s *story) event(namespace, name, part string) string {
	events, err := s.env.Kube.CoreV1().Events(namespace).List(s.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return ""
	}
	for _, ev := range events.Items {
		if strings.Contains(ev.Message, part) {
			return fmt.Sprintf("%s %s: %s", ev.Type, ev.Reason, ev.Message)
		}
	}
	return ""
}

func (s *story) metrics() error {
	resp, err := http.Get("http://" + s.env.Local.Sidecars[0].HTTPAddr + "/metrics") //nolint:noctx // local demo endpoint
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		if line := scanner.Text(); strings.HasPrefix(line, "cross_namespace_") {
			s.say("  %s", line)
		}
	}
	return scanner.Err()
}

func (s *story) waitFor(what string, cond func(context.Context) bool) error {
	err := wait.PollUntilContextTimeout(s.ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		return cond(ctx), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}

func (s *story) title(text string) { fmt.Printf("\n== %s ==\n", text) }

func (s *story) step(format string, args ...any) {
	s.n++
	fmt.Printf("\n[%d] %s  (%.0fs)\n", s.n, fmt.Sprintf(format, args...), time.Since(s.start).Seconds())
}

func (s *story) say(format string, args ...any) { fmt.Printf(format+"\n", args...) }

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

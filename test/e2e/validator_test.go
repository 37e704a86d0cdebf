//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/xns-csi/csi-provisioner/internal/validator"
	popv1beta1 "github.com/xns-csi/csi-provisioner/pkg/apis/populator/v1beta1"
	generated "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// TestE2EValidator runs the volume-data-source-validator binary on the
// shared control plane, as the ServiceAccount of deploy/validator, under
// leader election: started before the VolumePopulator CRD is installed,
// then seed 001's four validator cases, a VolumePopulator registering a
// kind that was reported, and a claim across namespaces without and with a
// ReferenceGrant.
//
// Its claims use a StorageClass no provisioner serves, so only the
// validator speaks about them; it runs with one worker and -v=4, and what
// it decided is read from its log ("Decided"), so "no event" is checked
// once the claim was decided, not after a sleep.
func TestE2EValidator(t *testing.T) {
	ctx := ctxFor(t)
	ensureGrantCRD(t)
	// Another test of this process (TestE2ETransfer installs every project
	// CRD) may have installed the VolumePopulator CRD already.
	_, err := world.Kube.Discovery().ServerResourcesForGroupVersion("populator.storage.k8s.io/v1beta1")
	populatorsServed := err == nil
	v, err := world.StartValidator(ctx, "validator", "--leader-election", "--leader-election-namespace=default",
		"--feature-gates=CrossNamespaceSourceProvisioning=true", "--worker-threads=1", "--v=4")
	if err != nil {
		t.Fatal(err)
	}
	// Ready once the claim cache has synced; the optional caches never
	// hold that up, so the grants' may still be syncing then.
	readyz := waitReadyz(t, v, "ReferenceGrant: available")
	switch notServed := strings.Contains(readyz, "VolumePopulator: VolumePopulator API (populator.storage.k8s.io/v1beta1/volumepopulators) is not served"); {
	case populatorsServed && notServed:
		t.Errorf("/readyz = %q says the VolumePopulator CRD is not installed, but it is", readyz)
	case populatorsServed:
		t.Log("The VolumePopulator CRD was installed before the validator started: its late installation is not tested")
	case !notServed:
		t.Errorf("/readyz = %q, want it to say the VolumePopulator CRD is not installed", readyz)
	}
	if err := world.InstallPopulatorCRD(ctx); err != nil {
		t.Fatal(err)
	}
	waitReadyz(t, v, "VolumePopulator: available")

	ns, src := namespace(t, "val"), namespace(t, "val-src")
	class := "unserved-" + ns // no provisioner: the validator alone reports on these claims
	group, kind := "hello-"+ns+".example.com", "Hello"

	t.Run("SeedCasesWithoutEvents", func(t *testing.T) {
		createPVC(t, ns, "none", class)
		createPVC(t, ns, "snapshot", class, restoring("", "foo-backup"))
		createPVC(t, ns, "clone", class, cloning("none"))
		for _, name := range []string{"none", "snapshot", "clone"} {
			waitDecided(t, v, ns, name, "Quiet")
			noValidatorEvent(t, v, ns, name)
		}
	})
	t.Run("UnregisteredKind", func(t *testing.T) {
		createPVC(t, ns, "unregistered", class, populatedBy(group, kind, "src"))
		msg := waitValidatorEvent(t, ns, "unregistered", validator.ReasonUnrecognizedDataSourceKind)
		if !strings.Contains(msg, fmt.Sprintf("kind %q of API group %q", kind, group)) {
			t.Errorf("message %q does not name the kind", msg)
		}
	})
	outer := t // the VolumePopulator outlives its subtest, so its claims stay quiet
	t.Run("VolumePopulatorCreated", func(t *testing.T) {
		createPopulator(outer, "hello-"+ns, group, kind)
		waitDecided(t, v, ns, "unregistered", "Quiet")
		createPVC(t, ns, "registered", class, populatedBy(group, kind, "src"))
		waitDecided(t, v, ns, "registered", "Quiet")
		noValidatorEvent(t, v, ns, "registered")
		if n := len(validatorEvents(t, ns, "unregistered")); n != 1 {
			t.Errorf("%s/unregistered has %d validator events, want the one before the VolumePopulator", ns, n)
		}
	})
	t.Run("CrossNamespaceWithoutGrant", func(t *testing.T) {
		createPVC(t, ns, "cross", class, restoring(src, "foo-backup"))
		msg := waitValidatorEvent(t, ns, "cross", "ReferenceGrantMissing")
		want := fmt.Sprintf(`create one with from {group: "", kind: PersistentVolumeClaim, namespace: %s} and to {group: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: foo-backup}`, ns)
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name the grant to create (%q)", msg, want)
		}
		grant(t, src, "allow-"+ns, ns, "foo-backup")
		waitDecided(t, v, ns, "cross", "Quiet")
		if n := len(validatorEvents(t, ns, "cross")); n != 1 {
			t.Errorf("%s/cross has %d validator events, want no further one once the grant allows it", ns, n)
		}
	})
	t.Run("CrossNamespaceWithGrant", func(t *testing.T) {
		createPVC(t, ns, "cross-granted", class, restoring(src, "foo-backup"))
		waitDecided(t, v, ns, "cross-granted", "Quiet")
		noValidatorEvent(t, v, ns, "cross-granted")
	})
	if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", v.PID())); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "VmRSS:") || strings.HasPrefix(line, "RssAnon:") {
				t.Log("validator", line)
			}
		}
	}
}

// createPopulator creates a VolumePopulator registering group/kind and
// deletes it after the test.
func createPopulator(t *testing.T, name, group, kind string) {
	t.Helper()
	config, err := world.Cluster.RESTConfig(cluster.Admin)
	if err != nil {
		t.Fatal(err)
	}
	client, err := generated.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	p := &popv1beta1.VolumePopulator{ObjectMeta: metav1.ObjectMeta{Name: name}, SourceKind: metav1.GroupKind{Group: group, Kind: kind}}
	if _, err := client.PopulatorV1beta1().VolumePopulators().Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.PopulatorV1beta1().VolumePopulators().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// waitReadyz waits until the validator's /readyz answers 200 with a body
// containing part, and returns the body.
func waitReadyz(t *testing.T, v *localenv.Validator, part string) string {
	t.Helper()
	var body string
	err := wait.PollUntilContextTimeout(ctxFor(t), 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+v.HTTPAddr+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == http.StatusOK && strings.Contains(body, part), nil
	})
	if err != nil {
		t.Fatalf("/readyz never said %q; last: %q (log: %s)", part, body, v.LogPath())
	}
	return body
}

// waitDecided waits until the validator's log says it decided the claim
// with action (-v=4).
func waitDecided(t *testing.T, v *localenv.Validator, namespace, name, action string) {
	t.Helper()
	want := fmt.Sprintf(`"Decided" pvc="%s/%s" action=%q`, namespace, name, action)
	err := wait.PollUntilContextTimeout(ctxFor(t), 200*time.Millisecond, eventually, true, func(context.Context) (bool, error) {
		log, err := os.ReadFile(v.LogPath())
		return err == nil && strings.Contains(string(log), want), nil
	})
	if err != nil {
		t.Fatalf("the validator never logged %s (see %s)", want, v.LogPath())
	}
}

// noValidatorEvent checks that the validator never told the claim
// anything: no event of its, and no "Telling the claim" in its log.
func noValidatorEvent(t *testing.T, v *localenv.Validator, namespace, name string) {
	t.Helper()
	if events := validatorEvents(t, namespace, name); len(events) > 0 {
		t.Errorf("%s/%s has validator events %q, want none", namespace, name, events)
	}
	log, err := os.ReadFile(v.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if told := fmt.Sprintf(`"Telling the claim" pvc="%s/%s"`, namespace, name); strings.Contains(string(log), told) {
		t.Errorf("the validator logged %s", told)
	}
}

// waitValidatorEvent waits for the validator's event with reason on the
// claim and returns its message.
func waitValidatorEvent(t *testing.T, namespace, name, reason string) string {
	t.Helper()
	var msg string
	err := wait.PollUntilContextTimeout(ctxFor(t), 200*time.Millisecond, eventually, true, func(context.Context) (bool, error) {
		for _, ev := range validatorEvents(t, namespace, name) {
			if strings.HasPrefix(ev, reason+": ") {
				msg = strings.TrimPrefix(ev, reason+": ")
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no %s event of the validator on %s/%s\n%s", reason, namespace, name, describeEvents(namespace, name))
	}
	return msg
}

// validatorEvents are the validator's events on the claim, as "<reason>:
// <message>".
func validatorEvents(t *testing.T, namespace, name string) []string {
	t.Helper()
	return eventsFrom(t, namespace, name, validator.Component)
}

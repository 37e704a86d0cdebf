package referencegrant

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
)

func TestCheckerAllowsViaTheServedVersion(t *testing.T) {
	allowing := grant(claimsFromTest, fooBackup)
	tests := []struct {
		name   string
		served []string
		client *gatewayfake.Clientset
	}{
		{name: "a v1 grant allows when v1 is served", served: []string{"v1", "v1beta1"}, client: gatewayfake.NewClientset(v1Grant(allowing))},
		{name: "a v1beta1 grant allows when only v1beta1 is served", served: []string{"v1beta1"}, client: gatewayfake.NewClientset(v1beta1Grant(allowing))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checker, changed := runChecker(t, tt.client, servedVersions(tt.served...))

			d := decidesAs(t, checker, claimUsesSnapshot(), ReasonAllowed)
			if !d.Allowed || d.Grant != "prod/bar" {
				t.Errorf("Check() = %+v, want allowed by prod/bar", d)
			}
			waitUntil(t, `OnChange("") is called on sync`, func() bool { return changed.seen("") })
		})
	}
}

func TestCheckerFollowsGrantChanges(t *testing.T) {
	client := gatewayfake.NewClientset()
	checker, changed := runChecker(t, client, servedVersions("v1"))
	ref := claimUsesSnapshot()

	d := decidesAs(t, checker, ref, ReasonNotGranted)
	if !strings.Contains(d.Message, `create one with from {group: "", kind: PersistentVolumeClaim, namespace: test}`) {
		t.Errorf("Check() message = %q, want it to say which grant is missing", d.Message)
	}
	waitUntilWatching(t, client)

	// A grant added later re-queues its namespace and then allows.
	_, err := client.GatewayV1().ReferenceGrants("prod").Create(context.Background(), v1Grant(grant(claimsFromTest, everySnapshot)), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating grant: %v", err)
	}
	waitUntil(t, `OnChange("prod") is called`, func() bool { return changed.seen("prod") })
	decidesAs(t, checker, ref, ReasonAllowed)

	// A deleted grant refuses again.
	if err := client.GatewayV1().ReferenceGrants("prod").Delete(context.Background(), "bar", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting grant: %v", err)
	}
	decidesAs(t, checker, ref, ReasonNotGranted)
}

func TestCheckerWaitsForTheCRD(t *testing.T) {
	disc := servedVersions()
	checker, changed := runChecker(t, gatewayfake.NewClientset(v1Grant(grant(claimsFromTest, fooBackup))), disc)
	ref := claimUsesSnapshot()

	d := decidesAs(t, checker, ref, ReasonUnavailable)
	waitUntil(t, "the decision says the CRD is missing", func() bool {
		d = checker.Check(ref)
		return strings.Contains(d.Message, "is the CRD installed?")
	})
	if d.Allowed || !strings.HasPrefix(d.Message, `cannot check whether PersistentVolumeClaims in namespace "test" may use VolumeSnapshot "foo-backup" in namespace "prod": `) {
		t.Errorf("Check() = %+v, want an unavailable decision about the reference", d)
	}
	// Claims that waited while discovery ran are decided again: the CRD
	// is missing, which they are told.
	waitUntil(t, `OnChange("") is called once the CRD is known to be missing`, func() bool { return changed.count("") == 1 })

	disc.serve("v1")
	waitUntil(t, `OnChange("") is called once the CRD is installed`, func() bool { return changed.count("") == 2 })
	decidesAs(t, checker, ref, ReasonAllowed)
}

// TestCheckerRefusesATerminatingGrant: a grant whose deletion waits for a
// finalizer (a GitOps tool's, say) has been withdrawn by its owner.
func TestCheckerRefusesATerminatingGrant(t *testing.T) {
	rg := v1Grant(grant(claimsFromTest, fooBackup))
	rg.Finalizers = []string{"example.com/gitops"}
	rg.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	checker, _ := runChecker(t, gatewayfake.NewClientset(rg), servedVersions("v1"))
	decidesAs(t, checker, claimUsesSnapshot(), ReasonNotGranted)
}

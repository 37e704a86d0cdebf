package linkstatus

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/claimsource"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/fake"
	"github.com/xns-csi/csi-provisioner/pkg/referencegrant"
)

func link(snapNamespace string) *snapv1alpha1.VolumeSnapshotLink {
	return &snapv1alpha1.VolumeSnapshotLink{
		ObjectMeta: metav1.ObjectMeta{Name: "foo-link", Namespace: "test", Generation: 1},
		Spec:       snapv1alpha1.VolumeSnapshotLinkSpec{Source: snapv1alpha1.VolumeSnapshotLinkSource{Name: "foo-backup", Namespace: snapNamespace}},
	}
}

var (
	snapshot   = &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "foo-backup", Namespace: "prod"}}
	granted    = referencegrant.Decision{Allowed: true, Reason: referencegrant.ReasonAllowed, Message: "allowed by ReferenceGrant prod/bar"}
	notGranted = referencegrant.Decision{Reason: referencegrant.ReasonNotGranted, Message: "no ReferenceGrant in namespace prod allows it"}
	cannotTell = referencegrant.Decision{Reason: referencegrant.ReasonUnavailable, Message: "cannot check"}
)

func TestConditions(t *testing.T) {
	type want struct {
		status metav1.ConditionStatus
		reason claimsource.Reason
	}
	tests := []struct {
		name              string
		in                Input
		resolved, allowed want
	}{
		{"a granted link to an existing snapshot", Input{Link: link("prod"), Snapshot: snapshot, Grant: granted},
			want{metav1.ConditionTrue, claimsource.ReasonSnapshotFound}, want{metav1.ConditionTrue, claimsource.ReasonGranted}},
		{"a link without grant", Input{Link: link("prod"), Snapshot: snapshot, Grant: notGranted},
			want{metav1.ConditionTrue, claimsource.ReasonSnapshotFound}, want{metav1.ConditionFalse, claimsource.ReasonGrantMissing}},
		{"a link whose grants cannot be read", Input{Link: link("prod"), Snapshot: snapshot, Grant: cannotTell},
			want{metav1.ConditionTrue, claimsource.ReasonSnapshotFound}, want{metav1.ConditionUnknown, claimsource.ReasonGrantUnavailable}},
		{"a link to a missing snapshot", Input{Link: link("prod"), Grant: granted},
			want{metav1.ConditionFalse, claimsource.ReasonSnapshotNotFound}, want{metav1.ConditionTrue, claimsource.ReasonGranted}},
		{"a link whose snapshots cannot be read", Input{Link: link("prod"), SnapshotUnreadable: errors.New("not served"), Grant: granted},
			want{metav1.ConditionUnknown, claimsource.ReasonSnapshotAPIUnavailable}, want{metav1.ConditionTrue, claimsource.ReasonGranted}},
		{"a link in the snapshot's namespace needs no grant", Input{Link: link(""), Grant: notGranted},
			want{metav1.ConditionFalse, claimsource.ReasonSnapshotNotFound}, want{metav1.ConditionTrue, claimsource.ReasonSameNamespace}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conds := Conditions(tt.in)
			for kind, w := range map[string]want{snapv1alpha1.ConditionResolved: tt.resolved, snapv1alpha1.ConditionAllowed: tt.allowed} {
				c := meta.FindStatusCondition(conds, kind)
				if c == nil || c.Status != w.status || c.Reason != string(w.reason) || c.Message == "" {
					t.Errorf("%s = %+v, want %s/%s with a message", kind, c, w.status, w.reason)
				}
			}
		})
	}
}

// world is the controller's caches.
type world struct {
	links  map[string]*snapv1alpha1.VolumeSnapshotLink
	snaps  map[string]*snapv1.VolumeSnapshot
	grant  referencegrant.Decision
	checks int
}

func (w *world) GetLink(namespace, name string) (*snapv1alpha1.VolumeSnapshotLink, error) {
	return w.links[namespace+"/"+name], nil
}

func (w *world) LinksTo(namespace, name string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	var out []*snapv1alpha1.VolumeSnapshotLink
	for _, l := range w.links {
		if l.SourceNamespace() == namespace && l.Spec.Source.Name == name {
			out = append(out, l)
		}
	}
	return out, nil
}

func (w *world) LinksInto(namespace string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	var out []*snapv1alpha1.VolumeSnapshotLink
	for _, l := range w.links {
		if l.SourceNamespace() == namespace && l.Namespace != namespace {
			out = append(out, l)
		}
	}
	return out, nil
}

func (w *world) List() ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	return slices.Collect(maps.Values(w.links)), nil
}

func (w *world) GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error) {
	return w.snaps[namespace+"/"+name], nil
}

func (w *world) Check(referencegrant.Reference) referencegrant.Decision {
	w.checks++
	return w.grant
}

// statusWrites returns the status updates the client received.
func statusWrites(client *fake.Clientset) []*snapv1alpha1.VolumeSnapshotLink {
	var out []*snapv1alpha1.VolumeSnapshotLink
	for _, a := range client.Actions() {
		if u, ok := a.(k8stesting.UpdateAction); ok && a.GetSubresource() == "status" {
			out = append(out, u.GetObject().(*snapv1alpha1.VolumeSnapshotLink))
		}
	}
	return out
}

func TestControllerWritesOnlyChanges(t *testing.T) {
	ctx := context.Background()
	l := link("prod")
	client := fake.NewSimpleClientset(l)
	w := &world{links: map[string]*snapv1alpha1.VolumeSnapshotLink{"test/foo-link": l}, snaps: map[string]*snapv1.VolumeSnapshot{}, grant: notGranted}
	c := New(Config{Client: client, Links: w, Snapshots: w, Grants: w})
	key := types.NamespacedName{Namespace: "test", Name: "foo-link"}
	// sync as the informer would see the link after each write.
	sync := func() {
		t.Helper()
		if err := c.sync(ctx, key); err != nil {
			t.Fatal(err)
		}
		if writes := statusWrites(client); len(writes) > 0 {
			w.links["test/foo-link"] = writes[len(writes)-1]
		}
	}

	sync()
	writes := statusWrites(client)
	if len(writes) != 1 {
		t.Fatalf("first sync wrote %d statuses, want 1", len(writes))
	}
	if got := meta.FindStatusCondition(writes[0].Status.Conditions, snapv1alpha1.ConditionAllowed); got == nil || got.Status != metav1.ConditionFalse {
		t.Errorf("Allowed = %+v, want False", got)
	}
	if writes[0].Status.ObservedGeneration != 1 {
		t.Errorf("observedGeneration = %d, want 1", writes[0].Status.ObservedGeneration)
	}

	sync()
	if n := len(statusWrites(client)); n != 1 {
		t.Errorf("a sync without change wrote again: %d writes", n)
	}

	w.grant, w.snaps["prod/foo-backup"] = granted, snapshot
	c.GrantsChanged("prod")
	if c.queue.Len() != 1 {
		t.Fatalf("GrantsChanged(prod) queued %d links, want 1", c.queue.Len())
	}
	c.GrantsChanged("staging")
	if c.queue.Len() != 1 {
		t.Errorf("GrantsChanged(staging) queued a link that does not cross into staging")
	}
	sync()
	writes = statusWrites(client)
	last := writes[len(writes)-1]
	for _, kind := range []string{snapv1alpha1.ConditionResolved, snapv1alpha1.ConditionAllowed} {
		if got := meta.FindStatusCondition(last.Status.Conditions, kind); got == nil || got.Status != metav1.ConditionTrue {
			t.Errorf("after the grant and snapshot appeared %s = %+v, want True", kind, got)
		}
	}
}

func TestControllerIgnoresDeletedLinks(t *testing.T) {
	client := fake.NewSimpleClientset()
	w := &world{links: map[string]*snapv1alpha1.VolumeSnapshotLink{}}
	c := New(Config{Client: client, Links: w, Snapshots: w, Grants: w})
	if err := c.sync(context.Background(), types.NamespacedName{Namespace: "test", Name: "gone"}); err != nil || len(client.Actions()) != 0 {
		t.Errorf("sync of a deleted link = %v with %d actions, want nothing", err, len(client.Actions()))
	}
}

func TestCachesBecomingReadableQueueEveryLink(t *testing.T) {
	cross, local := link("prod"), link("")
	local.Name = "local"
	w := &world{links: map[string]*snapv1alpha1.VolumeSnapshotLink{"test/foo-link": cross, "test/local": local}}
	for name, event := range map[string]func(*Controller){
		"grants readable":    func(c *Controller) { c.GrantsChanged("") },
		"snapshots readable": func(c *Controller) { c.Resync() },
		"a grant in prod":    func(c *Controller) { c.GrantsChanged("prod") },
	} {
		t.Run(name, func(t *testing.T) {
			c := New(Config{Links: w, Snapshots: w, Grants: w})
			defer c.queue.ShutDown()
			event(c)
			want := 2
			if name == "a grant in prod" {
				want = 1 // only the link whose snapshot a grant in prod decides
			}
			if got := c.queue.Len(); got != want {
				t.Errorf("%d links queued, want %d", got, want)
			}
		})
	}
}

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

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/fake"
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
	// otherSnapshotOnly is the decision for the link when the only grant
	// in prod allows links from test to use another snapshot.
	otherSnapshotOnly = referencegrant.Decide([]referencegrant.Grant{grantFor("other-backup")},
		referencegrant.LinkReference("test", "prod", "foo-backup"))
	local = &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "foo-backup", Namespace: "test"}}
)

// grantFor is a ReferenceGrant in prod that allows links in test to use
// the snapshot name.
func grantFor(name string) referencegrant.Grant {
	return referencegrant.Grant{Namespace: "prod", Name: "links",
		From: []referencegrant.From{{Group: datasource.SnapshotGroup, Kind: datasource.LinkKind, Namespace: "test"}},
		To:   []referencegrant.To{{Group: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Name: name}}}
}

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
		{"a link without grant says nothing about an existing snapshot", Input{Link: link("prod"), Snapshot: snapshot, Grant: notGranted},
			want{metav1.ConditionUnknown, claimsource.ReasonGrantMissing}, want{metav1.ConditionFalse, claimsource.ReasonGrantMissing}},
		{"a link without grant says nothing about a missing snapshot", Input{Link: link("prod"), Grant: notGranted},
			want{metav1.ConditionUnknown, claimsource.ReasonGrantMissing}, want{metav1.ConditionFalse, claimsource.ReasonGrantMissing}},
		{"a link whose grant allows another snapshot only says nothing about this one", Input{Link: link("prod"), Snapshot: snapshot, Grant: otherSnapshotOnly},
			want{metav1.ConditionUnknown, claimsource.ReasonGrantMissing}, want{metav1.ConditionFalse, claimsource.ReasonGrantMissing}},
		{"a link whose grants cannot be read says nothing about the snapshot", Input{Link: link("prod"), Snapshot: snapshot, Grant: cannotTell},
			want{metav1.ConditionUnknown, claimsource.ReasonGrantUnavailable}, want{metav1.ConditionUnknown, claimsource.ReasonGrantUnavailable}},
		{"a granted link to a missing snapshot", Input{Link: link("prod"), Grant: granted},
			want{metav1.ConditionFalse, claimsource.ReasonSnapshotNotFound}, want{metav1.ConditionTrue, claimsource.ReasonGranted}},
		{"a granted link whose snapshots cannot be read", Input{Link: link("prod"), SnapshotUnreadable: errors.New("not served"), Grant: granted},
			want{metav1.ConditionUnknown, claimsource.ReasonSnapshotAPIUnavailable}, want{metav1.ConditionTrue, claimsource.ReasonGranted}},
		{"a link in the snapshot's namespace needs no grant", Input{Link: link(""), Grant: notGranted},
			want{metav1.ConditionFalse, claimsource.ReasonSnapshotNotFound}, want{metav1.ConditionTrue, claimsource.ReasonSameNamespace}},
		{"a link in the snapshot's namespace sees its snapshot", Input{Link: link(""), Snapshot: local},
			want{metav1.ConditionTrue, claimsource.ReasonSnapshotFound}, want{metav1.ConditionTrue, claimsource.ReasonSameNamespace}},
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

// harness runs a Controller on a world with one link, test/foo-link to
// prod/foo-backup, syncing what its handlers queue as the informer would
// see the link after each write.
type harness struct {
	t      *testing.T
	w      *world
	c      *Controller
	client *fake.Clientset
}

func newHarness(t *testing.T, grant referencegrant.Decision, snaps ...*snapv1.VolumeSnapshot) *harness {
	l := link("prod")
	w := &world{links: map[string]*snapv1alpha1.VolumeSnapshotLink{"test/foo-link": l}, snaps: map[string]*snapv1.VolumeSnapshot{}, grant: grant}
	for _, s := range snaps {
		w.snaps[s.Namespace+"/"+s.Name] = s
	}
	client := fake.NewSimpleClientset(l)
	h := &harness{t: t, w: w, c: New(Config{Client: client, Links: w, Snapshots: w, Grants: w}), client: client}
	t.Cleanup(h.c.queue.ShutDown)
	h.c.enqueueLink(l)
	h.drain()
	return h
}

// drain syncs the queued links.
func (h *harness) drain() {
	h.t.Helper()
	for h.c.queue.Len() > 0 {
		key, _ := h.c.queue.Get()
		if err := h.c.sync(context.Background(), key); err != nil {
			h.t.Fatal(err)
		}
		h.c.queue.Done(key)
		if writes := statusWrites(h.client); len(writes) > 0 {
			h.w.links["test/foo-link"] = writes[len(writes)-1]
		}
	}
}

// resolved is the link's Resolved condition as last written.
func (h *harness) resolved() *metav1.Condition {
	return meta.FindStatusCondition(h.w.links["test/foo-link"].Status.Conditions, snapv1alpha1.ConditionResolved)
}

func TestControllerWritesOnlyChanges(t *testing.T) {
	h := newHarness(t, notGranted)
	writes := statusWrites(h.client)
	if len(writes) != 1 {
		t.Fatalf("first sync wrote %d statuses, want 1", len(writes))
	}
	if got := meta.FindStatusCondition(writes[0].Status.Conditions, snapv1alpha1.ConditionAllowed); got == nil || got.Status != metav1.ConditionFalse {
		t.Errorf("Allowed = %+v, want False", got)
	}
	if writes[0].Status.ObservedGeneration != 1 {
		t.Errorf("observedGeneration = %d, want 1", writes[0].Status.ObservedGeneration)
	}

	h.c.enqueueLink(h.w.links["test/foo-link"])
	h.drain()
	if n := len(statusWrites(h.client)); n != 1 {
		t.Errorf("a sync without change wrote again: %d writes", n)
	}

	h.w.grant, h.w.snaps["prod/foo-backup"] = granted, snapshot
	h.c.GrantsChanged("prod")
	if h.c.queue.Len() != 1 {
		t.Fatalf("GrantsChanged(prod) queued %d links, want 1", h.c.queue.Len())
	}
	h.c.GrantsChanged("staging")
	if h.c.queue.Len() != 1 {
		t.Errorf("GrantsChanged(staging) queued a link that does not cross into staging")
	}
	h.drain()
	writes = statusWrites(h.client)
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

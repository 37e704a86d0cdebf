package linkcache

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/fake"
	"github.com/xns-csi/csi-provisioner/test/discoverytest"
)

func TestMain(m *testing.M) {
	// The generated fake clientset never ends a watch-list with its bookmark.
	os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	os.Exit(m.Run())
}

func link(namespace, name, snapNamespace, snapName string) *snapv1alpha1.VolumeSnapshotLink {
	return &snapv1alpha1.VolumeSnapshotLink{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       snapv1alpha1.VolumeSnapshotLinkSpec{Source: snapv1alpha1.VolumeSnapshotLinkSource{Name: snapName, Namespace: snapNamespace}},
	}
}

func names(links []*snapv1alpha1.VolumeSnapshotLink) []string {
	var out []string
	for _, l := range links {
		out = append(out, l.Namespace+"/"+l.Name)
	}
	return out
}

func TestCacheWorksOnceTheCRDIsServed(t *testing.T) {
	client := fake.NewSimpleClientset(
		link("test", "to-prod", "prod", "snap"),
		link("staging", "to-prod-too", "prod", "snap"),
		link("test", "local", "", "snap"),
		link("test", "local-explicit", "test", "other"),
	)
	disc := discoverytest.New()
	var syncs atomic.Int32
	c := New(Config{Client: client, Discovery: disc, PollInterval: 10 * time.Millisecond, OnSynced: func() { syncs.Add(1) }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)

	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := c.GetLink("test", "to-prod")
		return errors.Is(err, optionalapi.ErrNotServed), nil
	}); err != nil {
		t.Fatal("GetLink without the CRD never said the API is not served")
	}
	disc.Serve(discoverytest.Resources(snapv1alpha1.SchemeGroupVersion.String(), "volumesnapshotlinks"))
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return syncs.Load() > 0, nil
	}); err != nil {
		t.Fatal("the cache never synced after the CRD was served")
	}

	if l, err := c.GetLink("test", "to-prod"); err != nil || l == nil || l.SourceNamespace() != "prod" {
		t.Errorf("GetLink(test/to-prod) = %v, %v", l, err)
	}
	if l, err := c.GetLink("test", "absent"); err != nil || l != nil {
		t.Errorf("an absent link = %v, %v; want nil, nil", l, err)
	}
	tests := []struct {
		name string
		got  func() ([]*snapv1alpha1.VolumeSnapshotLink, error)
		want []string
	}{
		{"links to prod/snap", func() ([]*snapv1alpha1.VolumeSnapshotLink, error) { return c.LinksTo("prod", "snap") },
			[]string{"staging/to-prod-too", "test/to-prod"}},
		{"a link without namespace names its own", func() ([]*snapv1alpha1.VolumeSnapshotLink, error) { return c.LinksTo("test", "snap") },
			[]string{"test/local"}},
		{"links into prod are those crossing into it", func() ([]*snapv1alpha1.VolumeSnapshotLink, error) { return c.LinksInto("prod") },
			[]string{"staging/to-prod-too", "test/to-prod"}},
		{"links that stay in their namespace need no grant", func() ([]*snapv1alpha1.VolumeSnapshotLink, error) { return c.LinksInto("test") },
			nil},
	}
	for _, tt := range tests {
		links, err := tt.got()
		got := names(links)
		slices.Sort(got)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}

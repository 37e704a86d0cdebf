package v1alpha1_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

func TestSourceNamespace(t *testing.T) {
	tests := map[string]struct {
		sourceNamespace string
		want            string
	}{
		"a source namespace names the snapshot's namespace": {
			sourceNamespace: "prod",
			want:            "prod",
		},
		"no source namespace means the link's own": {
			sourceNamespace: "",
			want:            "test",
		},
		"the link's own namespace spelled out is the same namespace": {
			sourceNamespace: "test",
			want:            "test",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			link := storyLink()
			link.Spec.Source.Namespace = tc.sourceNamespace
			if got := link.SourceNamespace(); got != tc.want {
				t.Errorf("SourceNamespace() = %q, want %q", got, tc.want)
			}
		})
	}
}

// storyLink is the VolumeSnapshotLink of KEP-3294's example flow: foo-link
// in test names the VolumeSnapshot foo-backup in prod.
func storyLink() *snapv1alpha1.VolumeSnapshotLink {
	return &snapv1alpha1.VolumeSnapshotLink{
		ObjectMeta: metav1.ObjectMeta{Name: "foo-link", Namespace: "test", Labels: map[string]string{"story": "1"}},
		Spec: snapv1alpha1.VolumeSnapshotLinkSpec{
			Source: snapv1alpha1.VolumeSnapshotLinkSource{Name: "foo-backup", Namespace: "prod"},
		},
	}
}

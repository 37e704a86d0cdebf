// Package linkcachetest is a link cache over fixed VolumeSnapshotLinks for
// the tests of the packages that read links (source protection, the
// snapshot webhook's DELETE guard).
package linkcachetest

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// Links answers as linkcache.Cache does over these links.
type Links []*snapv1alpha1.VolumeSnapshotLink

// GetLink returns the link namespace/name, nil when absent.
func (ls Links) GetLink(namespace, name string) (*snapv1alpha1.VolumeSnapshotLink, error) {
	for _, l := range ls {
		if l.Namespace == namespace && l.Name == name {
			return l, nil
		}
	}
	return nil, nil
}

// LinksTo returns the links to the VolumeSnapshot namespace/name.
func (ls Links) LinksTo(namespace, name string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	return ls.filter(func(l *snapv1alpha1.VolumeSnapshotLink) bool {
		return l.SourceNamespace() == namespace && l.Spec.Source.Name == name
	}), nil
}

// LinksInto returns the links to VolumeSnapshots in namespace.
func (ls Links) LinksInto(namespace string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	return ls.filter(func(l *snapv1alpha1.VolumeSnapshotLink) bool { return l.SourceNamespace() == namespace }), nil
}

func (ls Links) filter(keep func(*snapv1alpha1.VolumeSnapshotLink) bool) []*snapv1alpha1.VolumeSnapshotLink {
	var out []*snapv1alpha1.VolumeSnapshotLink
	for _, l := range ls {
		if keep(l) {
			out = append(out, l)
		}
	}
	return out
}

// Link is the link namespace/name to the VolumeSnapshot
// snapNamespace/snapName (snapNamespace "": the link's own namespace).
func Link(namespace, name, snapNamespace, snapName string) *snapv1alpha1.VolumeSnapshotLink {
	return &snapv1alpha1.VolumeSnapshotLink{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: snapv1alpha1.VolumeSnapshotLinkSpec{Source: snapv1alpha1.VolumeSnapshotLinkSource{Namespace: snapNamespace, Name: snapName}}}
}

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the types in this package. It is not the
// seed's storage.k8s.io: that group is served by kube-apiserver itself and
// a CRD in it would be refused (and would need Kubernetes API review).
const GroupName = "transfer.xns-csi.io"

// SchemeGroupVersion is the group and version of the types in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Resource returns the group-qualified resource of an unqualified one, e.g.
// for the NotFound errors of the generated listers.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder registers the types of this package in a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this package to a scheme, e.g. the one
	// of a fake clientset or an event recorder.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers the kinds of this package and the options
// (ListOptions, ...) a client sends with them.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&StorageTransferRequest{},
		&StorageTransferRequestList{},
		&StorageTransferAccept{},
		&StorageTransferAcceptList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

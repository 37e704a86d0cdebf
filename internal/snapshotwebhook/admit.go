package snapshotwebhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook/snapshotvalidation"
)

// The API groups and resources the webhook validates.
const (
	snapshotGroup      = "snapshot.storage.k8s.io"
	groupSnapshotGroup = "groupsnapshot.storage.k8s.io"

	snapshots            = "volumesnapshots"
	contents             = "volumesnapshotcontents"
	snapshotClasses      = "volumesnapshotclasses"
	groupSnapshotClasses = "volumegroupsnapshotclasses"
	// otherResource is the metrics' resource label of every other
	// resource, so that a misconfigured webhook cannot grow the metrics
	// without bound.
	otherResource = "other"
)

// The reasons of requests allowed without a decision, the metrics' reason
// label.
const (
	reasonUndecodable        = "undecodable"
	reasonClassesUnavailable = "classes-unavailable"
	reasonNotValidated       = "not-validated"
)

// ClassLister returns the classes of one kind that exist, from an
// informer cache, or why they cannot be read.
type ClassLister func() ([]snapshotvalidation.Class, error)

// Admitter decides admission requests with internal/snapshotwebhook/snapshotvalidation's rules.
type Admitter struct {
	// Content are the VolumeSnapshotContent rules' settings.
	Content snapshotvalidation.ContentOptions
	// SnapshotClasses lists the VolumeSnapshotClasses.
	SnapshotClasses ClassLister
	// GroupSnapshotClasses lists the VolumeGroupSnapshotClasses; nil
	// leaves them unvalidated (--enable-volume-group-snapshot-webhook off).
	GroupSnapshotClasses ClassLister
	// DeleteGuard decides the DELETE of VolumeSnapshots; nil allows them
	// all (--guard-cross-namespace-restores off).
	DeleteGuard *DeleteGuard
}

// verdict is the decision on one request.
type verdict struct {
	// resource is the metrics' resource label.
	resource string
	// errs are the rules the object breaks; the request is denied when
	// there are any.
	errs field.ErrorList
	kind schema.GroupKind
	// reason says why a request is allowed without a decision.
	reason string
	// cause is the error behind reason, for the log.
	cause error
	// refusal, when set, forbids the request with this message (the
	// DELETE guard); reason then says why.
	refusal string
}

// allowed reports whether the request is allowed.
func (v verdict) allowed() bool { return len(v.errs) == 0 && v.refusal == "" }

// status is the response's result: nil when allowed, else the rules broken
// as an Invalid status with the seed's HTTP code, 400, which kube-apiserver
// returns to the client after "admission webhook ... denied the request:".
func (v verdict) status(name string) *metav1.Status {
	if v.allowed() {
		return nil
	}
	if v.refusal != "" {
		status := apierrors.NewForbidden(schema.GroupResource{Group: snapshotGroup, Resource: snapshots}, name, errors.New(v.refusal)).Status()
		return &status
	}
	status := apierrors.NewInvalid(v.kind, name, v.errs).Status()
	status.Code = http.StatusBadRequest
	return &status
}

// metricReason is the metrics' reason label: the first broken rule's field
// when denied, else why the request was allowed without a decision.
func (v verdict) metricReason() string {
	if len(v.errs) > 0 {
		return v.errs[0].Field
	}
	return v.reason
}

// Admit decides req. It never denies what it cannot decide: an object it
// cannot decode, a resource it does not know, classes it cannot read.
func (a *Admitter) Admit(req *admissionv1.AdmissionRequest) verdict {
	op := snapshotvalidation.Operation(req.Operation)
	switch gr := (schema.GroupResource{Group: req.Resource.Group, Resource: req.Resource.Resource}); gr {
	case schema.GroupResource{Group: snapshotGroup, Resource: snapshots}:
		if req.Operation == admissionv1.Delete && a.DeleteGuard != nil {
			return a.DeleteGuard.decide(req)
		}
		return decideObjects(req, snapshots, func(obj, old *snapv1.VolumeSnapshot) field.ErrorList {
			return snapshotvalidation.Snapshot(op, obj, old)
		})
	case schema.GroupResource{Group: snapshotGroup, Resource: contents}:
		return decideObjects(req, contents, func(obj, old *snapv1.VolumeSnapshotContent) field.ErrorList {
			return snapshotvalidation.Content(op, obj, old, a.Content)
		})
	case schema.GroupResource{Group: snapshotGroup, Resource: snapshotClasses}:
		return decideClass(req, snapshotClasses, snapshotvalidation.SnapshotClassKind, a.SnapshotClasses)
	case schema.GroupResource{Group: groupSnapshotGroup, Resource: groupSnapshotClasses}:
		if a.GroupSnapshotClasses == nil {
			return verdict{resource: groupSnapshotClasses, reason: reasonNotValidated}
		}
		return decideClass(req, groupSnapshotClasses, snapshotvalidation.GroupSnapshotClassKind, a.GroupSnapshotClasses)
	default:
		return verdict{resource: otherResource, reason: reasonNotValidated}
	}
}

// decideObjects decodes the request's object and old object as T and asks
// rule. Only CREATE and UPDATE are decoded; the rules allow the others.
func decideObjects[T any](req *admissionv1.AdmissionRequest, resource string, rule func(obj, old *T) field.ErrorList) verdict {
	v := verdict{resource: resource, kind: schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}}
	obj, old, err := decodeRequest[T](req)
	if err != nil {
		v.reason, v.cause = reasonUndecodable, err
		return v
	}
	if obj != nil {
		v.errs = rule(obj, old)
	}
	return v
}

// classObject is what the default-class rule reads of a class of any kind
// and version: the fields it needs are the same in all of them.
type classObject struct {
	metav1.ObjectMeta `json:"metadata"`
	Driver            string `json:"driver"`
}

// decideClass decodes a class and checks the default-class rule against
// the classes list returns.
func decideClass(req *admissionv1.AdmissionRequest, resource string, kind snapshotvalidation.ClassKind, list ClassLister) verdict {
	v := verdict{resource: resource, kind: schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}}
	obj, old, err := decodeRequest[classObject](req)
	switch {
	case err != nil:
		v.reason, v.cause = reasonUndecodable, err
		return v
	case obj == nil:
		return v
	}
	class := snapshotvalidation.NewClass(kind, obj.Name, obj.Driver, obj.Annotations)
	var oldClass *snapshotvalidation.Class
	if old != nil {
		c := snapshotvalidation.NewClass(kind, old.Name, old.Driver, old.Annotations)
		oldClass = &c
	}
	if !class.Default {
		// Only a default needs the other classes.
		return v
	}
	others, err := list()
	if err != nil {
		v.reason, v.cause = reasonClassesUnavailable, err
		return v
	}
	v.errs = snapshotvalidation.DefaultClass(kind, snapshotvalidation.Operation(req.Operation), class, oldClass, others)
	return v
}

// decodeRequest decodes the object of a CREATE and the object and old
// object of an UPDATE; other operations carry nothing to validate and
// return nils.
func decodeRequest[T any](req *admissionv1.AdmissionRequest) (obj, old *T, err error) {
	switch req.Operation {
	case admissionv1.Create:
		obj, err = decodeObject[T](req.Object)
	case admissionv1.Update:
		if obj, err = decodeObject[T](req.Object); err == nil {
			old, err = decodeObject[T](req.OldObject)
		}
	}
	return obj, old, err
}

// decodeObject decodes raw as T, an object with metadata, leaving out of
// the metadata what no rule reads and what decodes into the most memory
// per byte (leanMeta): a request's memory is then bounded by its body's
// size (requestMemoryFactor), whatever the caller put in the object.
func decodeObject[T any](raw runtime.RawExtension) (*T, error) {
	if len(raw.Raw) == 0 {
		return nil, errors.New("the request carries no object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw.Raw, &fields); err != nil {
		return nil, fmt.Errorf("decoding the object: %w", err)
	}
	var meta leanMeta
	if raw, ok := fields["metadata"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("decoding the object's metadata: %w", err)
		}
		delete(fields, "metadata")
	}
	// encoding/json matches field names ignoring case: a key spelled
	// "Metadata" would be decoded in full into the object's metadata.
	// kube-apiserver sends "metadata" alone; any other spelling is a
	// crafted body's, and goes.
	for k := range fields {
		if strings.EqualFold(k, "metadata") {
			delete(fields, k)
		}
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("decoding the object: %w", err)
	}
	obj := new(T)
	if err := json.Unmarshal(rest, obj); err != nil {
		return nil, fmt.Errorf("decoding the object: %w", err)
	}
	accessor, ok := any(obj).(metav1.ObjectMetaAccessor)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	*accessor.GetObjectMeta().(*metav1.ObjectMeta) = meta.ObjectMeta
	return obj, nil
}

// leanMeta is an object's metadata without what no rule reads and what
// decodes into the most memory per byte of JSON: managed fields and owner
// references (lists of structs of a dozen fields, a few bytes each when
// empty) and labels. They are skipped, never allocated.
type leanMeta struct {
	metav1.ObjectMeta
	ManagedFields   skipped `json:"managedFields"`
	OwnerReferences skipped `json:"ownerReferences"`
	Labels          skipped `json:"labels"`
}

// skipped is a JSON value left undecoded.
type skipped struct{}

// UnmarshalJSON decodes nothing.
func (*skipped) UnmarshalJSON([]byte) error { return nil }

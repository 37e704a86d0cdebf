package transfer

// The explorer's API server (explore_test.go): one in-memory store behind
// the reactors of the client-go fakes, with the semantics the transfer
// controller relies on and the fakes' own tracker lacks: resourceVersion
// and UID preconditions (409 Conflict), finalizers and deletionTimestamp,
// status subresources, namespaces (NotFound when gone, Forbidden while
// terminating), admission refusals (a quota), server-side dry runs, and
// the controller's faults (a crash after some writes, a lost answer, a
// conflict).

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clienttesting "k8s.io/client-go/testing"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// The resources the explorer's API server serves.
const (
	resNamespaces = "namespaces"
	resClaims     = "persistentvolumeclaims"
	resVolumes    = "persistentvolumes"
	resPods       = "pods"
	resSnapshots  = "volumesnapshots"
	resContents   = "volumesnapshotcontents"
	resRequests   = "storagetransferrequests"
	resAccepts    = "storagetransferaccepts"
)

// kindInfo is what the API server knows of a resource.
type kindInfo struct {
	namespaced bool
	// short names the resource in histories.
	short   string
	newList func() runtime.Object
}

var servedKinds = map[string]kindInfo{
	resNamespaces: {false, "namespace", func() runtime.Object { return &v1.NamespaceList{} }},
	resClaims:     {true, "claim", func() runtime.Object { return &v1.PersistentVolumeClaimList{} }},
	resVolumes:    {false, "pv", func() runtime.Object { return &v1.PersistentVolumeList{} }},
	resPods:       {true, "pod", func() runtime.Object { return &v1.PodList{} }},
	resSnapshots:  {true, "snapshot", func() runtime.Object { return &snapv1.VolumeSnapshotList{} }},
	resContents:   {false, "content", func() runtime.Object { return &snapv1.VolumeSnapshotContentList{} }},
	resRequests:   {true, "request", func() runtime.Object { return &transferv1alpha1.StorageTransferRequestList{} }},
	resAccepts:    {true, "accept", func() runtime.Object { return &transferv1alpha1.StorageTransferAcceptList{} }},
}

// resourceOf is the resource of a served object.
func resourceOf(obj runtime.Object) string {
	if res, ok := resourceByType[reflect.TypeOf(obj)]; ok {
		return res
	}
	panic(fmt.Sprintf("the explorer's API server does not serve %T", obj))
}

// resourceByType is the resource of each served object type: a pointer
// to the type of its list's items.
var resourceByType = func() map[reflect.Type]string {
	m := map[reflect.Type]string{}
	for res, info := range servedKinds {
		items, _ := reflect.TypeOf(info.newList()).Elem().FieldByName("Items")
		m[reflect.PointerTo(items.Type.Elem())] = res
	}
	return m
}()

// storeKey names an object of the store.
type storeKey struct{ resource, namespace, name string }

func keyOf(obj runtime.Object) storeKey {
	m := metaOf(obj)
	return storeKey{resourceOf(obj), m.GetNamespace(), m.GetName()}
}

func (k storeKey) String() string {
	if k.namespace == "" {
		return servedKinds[k.resource].short + " " + k.name
	}
	return servedKinds[k.resource].short + " " + k.namespace + "/" + k.name
}

func metaOf(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	return m
}

// copyStatus sets dst's status to a copy of src's: every served kind has
// a status subresource, so an update of the object keeps the stored
// status and an update of the status changes nothing else.
func copyStatus(dst, src runtime.Object) {
	src = src.DeepCopyObject()
	reflect.ValueOf(dst).Elem().FieldByName("Status").Set(reflect.ValueOf(src).Elem().FieldByName("Status"))
}

// The controller's faults in one sync.
const (
	faultNone = ""
	// faultCrash: the controller dies before its write number at: that
	// write and every later one never reach the API server.
	faultCrash = "crash-before-write"
	// faultLost: write number at is made, but its answer is lost (the
	// controller sees an error).
	faultLost = "lost-answer"
	// faultConflict: write number at is refused with 409 Conflict, as if
	// another writer had just changed the object.
	faultConflict = "conflict"
)

// fault is the fault of the controller's current sync.
type fault struct {
	kind string
	at   int
}

var errCrashed = errors.New("the controller crashed")

// world is the API server's store plus the backend's data and what the
// invariants remember of the history.
type world struct {
	objects map[storeKey]runtime.Object
	rv      int64
	born    map[storeKey]int
	// refused are the resources whose creates admission refuses, by
	// {resource, namespace}.
	refused map[storeKey]bool
	// held are namespaces kept Terminating (another finalizer).
	held map[string]bool
	// data are the backend volumes and snapshots, in scenario order.
	data []*datum
	now  metav1.Time

	// syncing is the request the controller syncs.
	syncing string
	// fault is the controller's fault in the current sync; writes counts
	// its writes, crashed is set once it crashed.
	fault   fault
	writes  int
	crashed bool

	// note records what happened, for a history's log (nil: not kept).
	note func(format string, args ...any)
	// violated records an invariant violated at the moment it happens.
	violated func(name, detail string)
}

func (w *world) logf(format string, args ...any) {
	if w.note != nil {
		w.note(format, args...)
	}
}

func (w *world) get(key storeKey) runtime.Object { return w.objects[key] }

// list is the objects of resource in namespace ("" for all), by key.
func (w *world) list(resource, namespace string) []runtime.Object {
	var keys []storeKey
	for k := range w.objects {
		if k.resource == resource && (namespace == "" || k.namespace == namespace) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b storeKey) int { return strings.Compare(a.namespace+"/"+a.name, b.namespace+"/"+b.name) })
	out := make([]runtime.Object, 0, len(keys))
	for _, k := range keys {
		out = append(out, w.objects[k])
	}
	return out
}

// add stores obj as it is (an object that existed before the history, or
// one a user move creates with its status).
func (w *world) add(obj runtime.Object) {
	obj = obj.DeepCopyObject()
	m := metaOf(obj)
	key := keyOf(obj)
	w.born[key]++
	if m.GetUID() == "" {
		// Unique, and the same whenever a history is replayed.
		m.SetUID(types.UID(strings.Join([]string{servedKinds[key.resource].short, key.namespace, key.name, strconv.Itoa(w.born[key])}, "-")))
	}
	m.SetCreationTimestamp(w.now)
	w.store(key, obj)
}

func (w *world) store(key storeKey, obj runtime.Object) {
	w.rv++
	metaOf(obj).SetResourceVersion(strconv.FormatInt(w.rv, 10))
	w.objects[key] = obj
}

func groupResource(resource string) schema.GroupResource {
	return schema.GroupResource{Resource: resource}
}

// admit is admission of a create in a namespace.
func (w *world) admit(key storeKey) error {
	if !servedKinds[key.resource].namespaced {
		return nil
	}
	ns, _ := w.get(storeKey{resNamespaces, "", key.namespace}).(*v1.Namespace)
	switch {
	case ns == nil:
		return apierrors.NewNotFound(groupResource(resNamespaces), key.namespace)
	case ns.DeletionTimestamp != nil:
		return apierrors.NewForbidden(groupResource(key.resource), key.name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", key.namespace))
	case w.refused[storeKey{key.resource, key.namespace, ""}]:
		return apierrors.NewForbidden(groupResource(key.resource), key.name,
			errors.New("exceeded quota: quota, requested: count/"+key.resource+"=1, used: 0, limited: 0"))
	}
	return nil
}

// create is a create by actor.
func (w *world) create(actor string, obj runtime.Object, dryRun bool) (runtime.Object, error) {
	obj = obj.DeepCopyObject()
	key := keyOf(obj)
	if err := w.admit(key); err != nil {
		return nil, err
	}
	if w.get(key) != nil {
		return nil, apierrors.NewAlreadyExists(groupResource(key.resource), key.name)
	}
	m := metaOf(obj)
	m.SetDeletionTimestamp(nil)
	m.SetGeneration(1)
	m.SetUID("")
	copyStatus(obj, reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object))
	if pvc, ok := obj.(*v1.PersistentVolumeClaim); ok {
		// The StorageObjectInUseProtection admission plugin.
		pvc.Finalizers = append(pvc.Finalizers, pvcProtectionFinalizer)
		pvc.Status.Phase = v1.ClaimPending
	}
	if dryRun {
		return obj, nil
	}
	w.add(obj)
	w.logf("%s creates %s", actor, key)
	return w.get(key).DeepCopyObject(), nil
}

// update is an update by actor of the object or (status) of its status.
func (w *world) update(actor string, obj runtime.Object, status, dryRun bool) (runtime.Object, error) {
	key := keyOf(obj)
	cur := w.get(key)
	if cur == nil {
		return nil, apierrors.NewNotFound(groupResource(key.resource), key.name)
	}
	m, cm := metaOf(obj), metaOf(cur)
	if rv := m.GetResourceVersion(); rv != "" && rv != cm.GetResourceVersion() || m.GetUID() != "" && m.GetUID() != cm.GetUID() {
		return nil, apierrors.NewConflict(groupResource(key.resource), key.name,
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	next := cur.DeepCopyObject()
	if status {
		copyStatus(next, obj)
	} else {
		next = obj.DeepCopyObject()
		copyStatus(next, cur)
		nm := metaOf(next)
		nm.SetUID(cm.GetUID())
		nm.SetCreationTimestamp(cm.GetCreationTimestamp())
		nm.SetDeletionTimestamp(cm.GetDeletionTimestamp())
		nm.SetGeneration(cm.GetGeneration())
		if cm.GetDeletionTimestamp() != nil && slices.ContainsFunc(nm.GetFinalizers(), func(f string) bool { return !slices.Contains(cm.GetFinalizers(), f) }) {
			return nil, apierrors.NewInvalid(schema.GroupKind{Kind: servedKinds[key.resource].short}, key.name, field.ErrorList{
				field.Forbidden(field.NewPath("metadata", "finalizers"), "no new finalizers can be added if the object is being deleted")})
		}
	}
	if dryRun {
		return next, nil
	}
	w.logf("%s updates %s%s", actor, key, map[bool]string{true: " status"}[status])
	if metaOf(next).GetDeletionTimestamp() != nil && len(metaOf(next).GetFinalizers()) == 0 {
		w.remove(actor, key)
		return next, nil
	}
	w.store(key, next)
	return next.DeepCopyObject(), nil
}

// del is a deletion by actor, under the preconditions pre.
func (w *world) del(actor string, key storeKey, pre *metav1.Preconditions, dryRun bool) error {
	cur := w.get(key)
	if cur == nil {
		return apierrors.NewNotFound(groupResource(key.resource), key.name)
	}
	cm := metaOf(cur)
	if pre != nil && (pre.UID != nil && *pre.UID != cm.GetUID() || pre.ResourceVersion != nil && *pre.ResourceVersion != cm.GetResourceVersion()) {
		return apierrors.NewConflict(groupResource(key.resource), key.name, errors.New("precondition failed"))
	}
	if dryRun {
		return nil
	}
	if len(cm.GetFinalizers()) == 0 {
		w.logf("%s deletes %s", actor, key)
		w.remove(actor, key)
		return nil
	}
	if cm.GetDeletionTimestamp() == nil {
		next := cur.DeepCopyObject()
		metaOf(next).SetDeletionTimestamp(&w.now)
		w.store(key, next)
		w.logf("%s deletes %s (held by %s)", actor, key, strings.Join(cm.GetFinalizers(), ", "))
		w.leaving(actor, key, next)
	}
	return nil
}

// remove takes an object out of the store.
func (w *world) remove(actor string, key storeKey) {
	obj := w.get(key)
	delete(w.objects, key)
	w.rv++
	if metaOf(obj).GetDeletionTimestamp() == nil {
		w.leaving(actor, key, obj)
	}
	// The csi-snapshotter deletes the backend snapshot of a content
	// deleted under Delete.
	if c, ok := obj.(*snapv1.VolumeSnapshotContent); ok && c.Spec.DeletionPolicy == snapv1.VolumeSnapshotContentDelete {
		w.destroy("csi-snapshotter", dataSnapshot, contentHandle(c), "content "+c.Name+" was deleted under Delete")
	}
}

// leaving is called when an object begins to be deleted: a source that
// stops owning its data records whether the transfer had both consents
// at that moment.
func (w *world) leaving(actor string, key storeKey, obj runtime.Object) {
	uid := metaOf(obj).GetUID()
	for _, d := range w.data {
		if d.left == nil && d.sourceUID == uid {
			d.left = w.consents()
			d.left.by = actor
		}
	}
}

// removeFinalizer is another controller removing its finalizer.
func (w *world) removeFinalizer(actor string, key storeKey, finalizer string) {
	next := w.get(key).DeepCopyObject()
	m := metaOf(next)
	m.SetFinalizers(slices.DeleteFunc(m.GetFinalizers(), func(f string) bool { return f == finalizer }))
	if _, err := w.update(actor, next, false, false); err != nil {
		panic(err)
	}
}

// set is another controller's update of an object it has changed: it
// reads and writes in one step, so it never conflicts.
func (w *world) set(actor string, obj runtime.Object, status bool) {
	metaOf(obj).SetResourceVersion("")
	if _, err := w.update(actor, obj, status, false); err != nil {
		panic(err)
	}
}

// react is the reactor of the fakes: every call of the controller.
func (w *world) react(action clienttesting.Action) (bool, runtime.Object, error) {
	res, ns := action.GetResource().Resource, action.GetNamespace()
	if _, ok := servedKinds[res]; !ok {
		return true, nil, fmt.Errorf("the explorer's API server does not serve %s", res)
	}
	switch a := action.(type) {
	case clienttesting.GetActionImpl:
		if obj := w.get(storeKey{res, ns, a.Name}); obj != nil {
			return true, obj.DeepCopyObject(), nil
		}
		return true, nil, apierrors.NewNotFound(groupResource(res), a.Name)
	case clienttesting.ListActionImpl:
		list := servedKinds[res].newList()
		var items []runtime.Object
		for _, obj := range w.list(res, ns) {
			items = append(items, obj.DeepCopyObject())
		}
		if err := meta.SetList(list, items); err != nil {
			return true, nil, err
		}
		return true, list, nil
	case clienttesting.CreateActionImpl:
		return w.write(true, len(a.CreateOptions.DryRun) > 0, func(dry bool) (runtime.Object, error) { return w.create("controller", a.Object, dry) })
	case clienttesting.UpdateActionImpl:
		// Writes of an accept's status are not counted: the controller
		// writes those of several accepts in the random order of its
		// index, and a fault must hit the same write whenever a history
		// is replayed.
		counted := res != resAccepts || a.Subresource != "status"
		return w.write(counted, len(a.UpdateOptions.DryRun) > 0, func(dry bool) (runtime.Object, error) {
			return w.update("controller", a.Object, a.Subresource == "status", dry)
		})
	case clienttesting.PatchActionImpl:
		counted := res != resAccepts || a.Subresource != "status"
		return w.write(counted, len(a.PatchOptions.DryRun) > 0, func(dry bool) (runtime.Object, error) {
			return w.patch("controller", storeKey{res, ns, a.Name}, a.PatchType, a.Patch, a.Subresource == "status", dry)
		})
	case clienttesting.DeleteActionImpl:
		return w.write(true, len(a.DeleteOptions.DryRun) > 0, func(dry bool) (runtime.Object, error) {
			key := storeKey{res, ns, a.Name}
			if err := w.del("controller", key, a.DeleteOptions.Preconditions, true); dry || err != nil {
				return nil, err
			}
			w.checkControllerDelete(key)
			return nil, w.del("controller", key, a.DeleteOptions.Preconditions, false)
		})
	}
	return true, nil, fmt.Errorf("the explorer's API server does not serve %s %s: model it in explore_api_test.go", action.GetVerb(), res)
}

// write is one write of the controller, under the sync's fault.
func (w *world) write(counted, dryRun bool, do func(dry bool) (runtime.Object, error)) (bool, runtime.Object, error) {
	if w.crashed {
		return true, nil, errCrashed
	}
	if dryRun || !counted {
		obj, err := do(dryRun)
		return true, obj, err
	}
	n := w.writes
	w.writes++
	switch {
	case w.fault.kind == faultCrash && n >= w.fault.at:
		w.crashed = true
		w.logf("the controller crashes before its write %d", n)
		return true, nil, errCrashed
	case w.fault.kind == faultConflict && n == w.fault.at:
		w.logf("the controller's write %d is refused: 409 Conflict", n)
		return true, nil, apierrors.NewConflict(groupResource(""), "", errors.New("injected conflict"))
	}
	obj, err := do(false)
	if w.fault.kind == faultLost && n == w.fault.at {
		w.logf("the answer to the controller's write %d is lost", n)
		return true, nil, errors.New("http2: client connection lost")
	}
	return true, obj, err
}

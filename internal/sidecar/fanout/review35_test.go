package fanout

// Review 35 of 086113a: the deletion-order Log is told that its claim
// handler has had the informer's initial list once the registration of
// the Handlers it shares reports HasSynced. These tests pin what that
// must mean: not before the Log's handler (nor any other sharing the
// registration) has been handed every listed claim, however long another
// handler of the same registration takes.

import (
	"context"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/deletionorder"
)

func review35Informer(names ...string) cache.SharedIndexInformer {
	list := &v1.PersistentVolumeClaimList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for _, n := range names {
		list.Items = append(list.Items, v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "ns",
			UID: types.UID("uid-" + n)}})
	}
	lw := listOnly{&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return list.DeepCopy(), nil },
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}}
	return cache.NewSharedIndexInformer(lw, &v1.PersistentVolumeClaim{}, 0, cache.Indexers{})
}

// TestReview35ALogSharingARegistrationIsNotDeliveredEarly: the Log's
// handler first, then a handler that is slow on the first listed claim.
// The informer has synced, the Log's handler has seen one claim; the other
// listed claim, which the Log has not seen, must not be ordered (it may
// have been created at any time before), until the whole list was handed
// to every handler; after that it still counts as listed, and a claim never
// seen counts as new.
func TestReview35ALogSharingARegistrationIsNotDeliveredEarly(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	inf := review35Informer("one", "two")
	l := deletionorder.New(nil)
	source := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", UID: "uid-s"}}
	deleting := source.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	l.SourceHandler().OnUpdate(source, deleting) // the deletion request arrived first

	first := make(chan string, 1)
	release := make(chan struct{})
	slow := cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		select {
		case first <- obj.(*v1.PersistentVolumeClaim).Name:
			<-release
		default:
		}
	}}
	reg, err := inf.AddEventHandler(Handlers{l.ClaimHandler(), slow})
	if err != nil {
		t.Fatal(err)
	}
	l.Delivering(&v1.PersistentVolumeClaim{}, reg.HasSynced)
	go inf.RunWithContext(ctx)

	var held string
	select {
	case held = <-first:
	case <-time.After(30 * time.Second):
		t.Fatal("no claim delivered")
	}
	other := map[string]string{"one": "two", "two": "one"}[held]
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer never synced")
	}
	claim := func(name string) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
	}
	if reg.HasSynced() {
		t.Error("the registration reports its list delivered while a handler still holds its first claim")
	}
	if after, known := l.CreatedAfterDeletion(claim(other), deleting); known {
		t.Errorf("a listed claim the Log has not seen yet is ordered (after %v) while the list is being delivered", after)
	}
	if after, known := l.CreatedAfterDeletion(claim(held), deleting); known {
		t.Errorf("a listed claim is ordered (after %v)", after)
	}
	close(release)
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		t.Fatal("the list was never delivered")
	}
	if after, known := l.CreatedAfterDeletion(claim(other), deleting); known {
		t.Errorf("a listed claim is ordered (after %v) once the list is delivered", after)
	}
	if after, known := l.CreatedAfterDeletion(claim("new"), deleting); !known || !after {
		t.Errorf("a claim never seen, after the list was delivered: after %v known %v; want after, known", after, known)
	}
}

package fanout

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// BenchmarkInitialList measures how long an informer takes to sync an
// initial list of 10,000 claims with four handlers that do nothing,
// registered one by one or as one Handlers.
func BenchmarkInitialList(b *testing.B) {
	const claims, handlers = 10000, 4
	list := &v1.PersistentVolumeClaimList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := range claims {
		list.Items = append(list.Items, v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint(i), Namespace: "ns"}})
	}
	lw := listOnly{&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return list.DeepCopy(), nil },
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}}
	nothing := cache.ResourceEventHandlerFuncs{AddFunc: func(any) {}}
	for _, shared := range []bool{false, true} {
		b.Run(fmt.Sprintf("shared=%v", shared), func(b *testing.B) {
			for b.Loop() {
				inf := cache.NewSharedIndexInformer(lw, &v1.PersistentVolumeClaim{}, 0, cache.Indexers{})
				var regs []cache.ResourceEventHandlerRegistration
				if shared {
					var hs Handlers
					for range handlers {
						hs = append(hs, nothing)
					}
					reg, _ := inf.AddEventHandler(hs)
					regs = append(regs, reg)
				} else {
					for range handlers {
						reg, _ := inf.AddEventHandler(nothing)
						regs = append(regs, reg)
					}
				}
				ctx, cancel := context.WithCancel(b.Context())
				go inf.RunWithContext(ctx)
				for _, reg := range regs {
					<-reg.HasSyncedChecker().Done()
				}
				cancel()
			}
		})
	}
}

// listOnly lists rather than streams its initial list: its watch sends
// nothing.
type listOnly struct{ *cache.ListWatch }

func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }

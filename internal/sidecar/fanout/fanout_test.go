package fanout

import (
	"fmt"
	"testing"

	"k8s.io/client-go/tools/cache"
)

// recorder records the notifications it is given, prefixed with its name.
func recorder(name string, log *[]string) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { *log = append(*log, fmt.Sprintf("%s add %v", name, obj)) },
		UpdateFunc: func(o, n any) { *log = append(*log, fmt.Sprintf("%s update %v→%v", name, o, n)) },
		DeleteFunc: func(obj any) { *log = append(*log, fmt.Sprintf("%s delete %v", name, obj)) },
	}
}

func TestHandlersDeliverEveryNotificationToEachInTheirOrder(t *testing.T) {
	var log []string
	h := Handlers{recorder("a", &log), recorder("b", &log)}
	h.OnAdd(1, true)
	h.OnUpdate(1, 2)
	h.OnDelete(2)
	want := "[a add 1 b add 1 a update 1→2 b update 1→2 a delete 2 b delete 2]"
	if got := fmt.Sprint(log); got != want {
		t.Errorf("delivered %s, want %s", got, want)
	}
}

func TestHandlersPassOnWhetherAnObjectIsInTheInitialList(t *testing.T) {
	var got []bool
	h := Handlers{cache.ResourceEventHandlerDetailedFuncs{AddFunc: func(_ any, initial bool) { got = append(got, initial) }}}
	h.OnAdd(1, true)
	h.OnAdd(2, false)
	if fmt.Sprint(got) != "[true false]" {
		t.Errorf("isInInitialList %v, want [true false]", got)
	}
}

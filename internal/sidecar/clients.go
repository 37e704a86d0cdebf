package sidecar

import (
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// eventsApart is the client handed to the ProvisionController: every call
// goes through the main client except events, which use a client with a
// rate limit of their own. Events are best effort (the broadcaster drops and
// aggregates them); PVs are what a claim needs, so they get the whole
// --kube-api-qps budget instead of a third of it. Kubelet separates its
// event budget the same way (--event-qps).
type eventsApart struct {
	kubernetes.Interface
	events kubernetes.Interface
}

// CoreV1 returns the main client's core API with events redirected.
func (c eventsApart) CoreV1() corev1client.CoreV1Interface {
	return coreEventsApart{CoreV1Interface: c.Interface.CoreV1(), events: c.events.CoreV1()}
}

type coreEventsApart struct {
	corev1client.CoreV1Interface
	events corev1client.CoreV1Interface
}

// Events goes through the events client.
func (c coreEventsApart) Events(namespace string) corev1client.EventInterface {
	return c.events.Events(namespace)
}

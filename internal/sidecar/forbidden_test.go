package sidecar

import (
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"
)

func TestMissingRBACForGrantsIsReportedThenRecoveredWithoutRestart(t *testing.T) {
	var forbidden atomic.Bool
	forbidden.Store(true)
	e := startEnv(t, knownSnapshots("prod/foo-backup"), beforeStart(func(e *env) {
		e.gateway.PrependReactor("list", "referencegrants", func(clienttesting.Action) (bool, runtime.Object, error) {
			if forbidden.Load() {
				gr := schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "referencegrants"}
				return true, nil, apierrors.NewForbidden(gr, "", nil)
			}
			return false, nil, nil
		})
	}))
	e.createSnapshot("prod", "foo-backup", true)
	e.createGrant("prod", "bar", "test", "foo-backup")
	claim := e.createClaim("test", "foo-testing", fromSnapshot("prod", "foo-backup"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", "forbidden")
	e.noPV(claim)

	forbidden.Store(false) // the cluster admin applies the RBAC
	e.waitForPV(claim)
}

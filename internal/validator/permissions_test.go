package validator

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
)

// TestTheValidatorsMissingPermissionIsItsOwn: when the API server refuses
// to let the validator (and only it) list ReferenceGrants or
// VolumeSnapshotLinks, a claim that needs them is told that the
// volume-data-source-validator cannot read them, not that a sidecar's
// ServiceAccount needs RBAC, and the API server's error, with the
// validator's ServiceAccount, stays in the validator's log (issue 22,
// defect 7).
func TestTheValidatorsMissingPermissionIsItsOwn(t *testing.T) {
	tests := []struct {
		name, resource string
		claim          *v1.PersistentVolumeClaim
		reason         claimsource.Reason
		cache          func(*Controller) error
	}{
		{name: "ReferenceGrants", resource: "referencegrants", claim: newClaim("c", restoring("prod", "foo-backup")),
			reason: claimsource.ReasonGrantUnavailable, cache: func(c *Controller) error { return c.grants.Err() }},
		{name: "VolumeSnapshotLinks", resource: "volumesnapshotlinks", claim: newClaim("c", throughLink("l")),
			reason: claimsource.ReasonLinkAPIUnavailable, cache: func(c *Controller) error { return c.links.Err() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startEnv(t, refusing(tt.resource))
			e.waitFor("the list to be refused", func() bool { return errors.Is(tt.cache(e.c), optionalapi.ErrForbidden) })
			e.createClaim(tt.claim)
			e.decidedAs("c", Warn)
			events := e.told()
			if len(events) != 1 || !strings.HasPrefix(events[0], v1.EventTypeWarning+" "+string(tt.reason)+" ") {
				t.Fatalf("events %q, want one %s", events, tt.reason)
			}
			if !strings.Contains(events[0], "The "+Component+" cannot") {
				t.Errorf("event %q does not name the %s", events[0], Component)
			}
			for _, internal := range []string{"sidecar's ServiceAccount", validatorUser, "is forbidden", "cannot list resource"} {
				if strings.Contains(events[0], internal) {
					t.Errorf("event %q shows the claim's owner %q", events[0], internal)
				}
			}
			if !strings.Contains(e.logs(), validatorUser) {
				t.Errorf("the validator's log does not say which ServiceAccount the API server refused")
			}
		})
	}
}

// TestAClaimThatWaitedForACacheIsToldWhenTheCacheIsRefused: a claim
// decided while the grant (or link) cache lists waits for the cache, and
// the cache's sync would re-queue it; when the list is refused instead,
// the refusal re-queues it, and it is told at once rather than at the next
// resync.
func TestAClaimThatWaitedForACacheIsToldWhenTheCacheIsRefused(t *testing.T) {
	tests := []struct {
		name, resource string
		claim          *v1.PersistentVolumeClaim
		reason         claimsource.Reason
	}{
		{name: "ReferenceGrants", resource: "referencegrants", claim: newClaim("c", restoring("prod", "foo-backup")),
			reason: claimsource.ReasonGrantUnavailable},
		{name: "VolumeSnapshotLinks", resource: "volumesnapshotlinks", claim: newClaim("c", throughLink("l")),
			reason: claimsource.ReasonLinkAPIUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := make(chan struct{})
			e := startEnv(t, withClaims(tt.claim), refusing(tt.resource), refusingAfter(gate))
			e.decidedAs("c", Wait)
			close(gate)
			e.decidedAs("c", Warn)
			if events := e.told(); len(events) != 1 || !strings.HasPrefix(events[0], v1.EventTypeWarning+" "+string(tt.reason)+" ") {
				t.Fatalf("events %q, want one %s", events, tt.reason)
			}
		})
	}
}

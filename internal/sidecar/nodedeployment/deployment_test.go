package nodedeployment

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// The decisions that need no claiming: no wait, no API call.
func TestProvisionChecksWithoutClaiming(t *testing.T) {
	notAssigned := `not responsible for provisioning of PVC default/claim because it is not assigned to node "node-a"`
	tests := []struct {
		name      string
		claim     *v1.PersistentVolumeClaim
		configure func(*Config)
		want      bool
	}{
		{name: "a claim assigned to this node is provisioned", claim: newClaim(selectedNode("node-a")), want: true},
		{name: "a claim assigned to another node is never touched", claim: newClaim(selectedNode("node-b"))},
		{name: "a late-binding claim without node waits for the scheduler", claim: newClaim(inClass("late"))},
		{name: "an immediate claim is not claimed with --node-deployment-immediate-binding=false", claim: newClaim(),
			configure: func(c *Config) { c.ImmediateBinding = false }},
		{name: "distributed immediate, allowed topologies not okay: not claimed", claim: newClaim(inClass("elsewhere")),
			configure: func(c *Config) { c.TopologyAware = true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			w := newWorld(t, tt.claim, immediate, late, newClass("elsewhere", storagev1.VolumeBindingImmediate, allowedNodes("node-b")))
			var configure []func(*Config)
			if tt.configure != nil {
				configure = append(configure, tt.configure)
			}
			a := w.addNode("node-a", configure...)
			claim := w.informed("default", "claim")

			if got := a.d.ShouldProvision(ctx, claim, nil); got != tt.want {
				t.Errorf("ShouldProvision = %v, want %v", got, tt.want)
			}
			err := a.d.CheckProvision(ctx, claim, nil)
			var ignored *controller.IgnoredError
			switch {
			case tt.want && err != nil:
				t.Errorf("CheckProvision = %v, want nil", err)
			case !tt.want && (!errors.As(err, &ignored) || ignored.Reason != notAssigned):
				t.Errorf("CheckProvision = %v, want IgnoredError %q", err, notAssigned)
			}
			if calls := w.apiCalls(false); len(calls) != 0 {
				t.Errorf("API calls %q, want none", calls)
			}
			if timers := w.clock.timerDurations(); len(timers) != 0 {
				t.Errorf("waited %v", timers)
			}
		})
	}
}

// A failed check lets the claim through ShouldProvision so that Provision
// checks again and the user gets an event, as upstream.
func TestAFailedCheckIsReportedByProvision(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, newClaim(inClass("missing")))
	a := w.addNode("node-a")
	claim := w.informed("default", "claim")
	if !a.d.ShouldProvision(ctx, claim, nil) {
		t.Error("ShouldProvision = false after a failed check, want true")
	}
	err := a.d.CheckProvision(ctx, claim, nil)
	var ignored *controller.IgnoredError
	if err == nil || errors.As(err, &ignored) || !strings.Contains(err.Error(), "node check failed") {
		t.Errorf("CheckProvision = %v, want a node check error", err)
	}
}

func TestTheCallerMayPassTheClass(t *testing.T) {
	w := newWorld(t, newClaim(inClass("unlisted")))
	a := w.addNode("node-a")
	if a.d.ShouldProvision(context.Background(), w.informed("default", "claim"), late) {
		t.Error("a late-binding class passed by the caller was not used")
	}
}

func TestCheckDelete(t *testing.T) {
	w := newWorld(t)
	a := w.addNode("node-a")
	volume := func(node string) *v1.PersistentVolume {
		return &v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{NodeAffinity: terms(v1.NodeSelectorTerm{
			MatchExpressions: []v1.NodeSelectorRequirement{expr(topologyKey, v1.NodeSelectorOpIn, node)}})}}
	}
	if err := a.d.CheckDelete(volume("node-a")); err != nil {
		t.Errorf("a volume of this node: CheckDelete = %v, want nil", err)
	}
	var ignored *controller.IgnoredError
	if err := a.d.CheckDelete(volume("node-b")); !errors.As(err, &ignored) || ignored.Reason != "PV was not provisioned on this node" {
		t.Errorf("a volume of another node: CheckDelete = %v, want upstream's IgnoredError", err)
	}
	broken := volume("node-a")
	broken.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Operator = "Near"
	if err := a.d.CheckDelete(broken); err == nil || errors.As(err, &ignored) {
		t.Errorf("an unreadable affinity: CheckDelete = %v, want an error", err)
	}
}

func TestNilDeploymentIsTheCentralDeployment(t *testing.T) {
	var d *Deployment
	claim := newClaim(selectedNode("elsewhere"))
	if !d.ShouldProvision(context.Background(), claim, nil) {
		t.Error("ShouldProvision = false")
	}
	if err := d.CheckProvision(context.Background(), claim, nil); err != nil {
		t.Errorf("CheckProvision = %v", err)
	}
	if err := d.CheckDelete(&v1.PersistentVolume{}); err != nil {
		t.Errorf("CheckDelete = %v", err)
	}
}

func TestClaimHandlerForgetsDeletedClaims(t *testing.T) {
	w := newWorld(t, newClaim(), immediate)
	a := w.addNode("node-a")
	handler := a.d.ClaimHandler()
	for _, deleted := range []any{newClaim(), cache.DeletedFinalStateUnknown{Key: "default/claim", Obj: newClaim()}} {
		a.d.attempts.next("uid-1")
		handler.OnDelete(deleted)
		if a.d.attempts.len() != 0 {
			t.Errorf("%T: the deleted claim's attempts are still counted", deleted)
		}
	}
}

func TestNewChecksTheConfig(t *testing.T) {
	w := newWorld(t)
	valid := w.addNode("node-a").d
	tests := map[string]func(*Config){
		"NODE_NAME missing":        func(c *Config) { c.Node.Name = "" },
		"no client":                func(c *Config) { c.Client = nil },
		"negative base delay":      func(c *Config) { c.BaseDelay = -1 },
		"max delay below the base": func(c *Config) { c.MaxDelay = c.BaseDelay - 1 },
	}
	for name, breakIt := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Node: valid.node, Client: valid.client, Claims: valid.claims, Classes: valid.classes,
				BaseDelay: baseDelay, MaxDelay: maxDelay}
			if _, err := New(cfg); err != nil {
				t.Fatalf("valid config refused: %v", err)
			}
			breakIt(&cfg)
			if _, err := New(cfg); err == nil {
				t.Error("New accepted it")
			}
		})
	}
}

package classparams

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

type secretCase struct {
	name    string
	secret  Secret
	params  map[string]string
	claim   Claim
	want    *v1.SecretReference
	wantErr string
}

func ref(namespace, name string) *v1.SecretReference {
	return &v1.SecretReference{Name: name, Namespace: namespace}
}

func runSecretCases(t *testing.T, tests []secretCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.secret, tt.params, tt.claim)
			if errText(err) != tt.wantErr {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("Resolve() = %v, want %v", got, tt.want)
			}
		})
	}
}

// The cases of the upstream csi-provisioner v6.4.0's TestGetSecretReference
// (inputs and expected results), with the error texts.
func TestResolveAsUpstream(t *testing.T) {
	np, prov := NodePublishSecret, ProvisionerSecret
	annotatedClaim := Claim{PVName: "pvname", Namespace: "pvcnamespace", Name: "pvcname", Annotations: map[string]string{"akey": "avalue"}}
	runSecretCases(t, []secretCase{
		{name: "no params", secret: np},
		{name: "empty values are an error", secret: np, params: map[string]string{np.DeprecatedNameKey: "", np.DeprecatedNamespaceKey: ""},
			wantErr: "failed to get name and namespace template from params: NodePublish secrets specified in parameters but value of either namespace or name is empty"},
		{name: "[deprecated] name without namespace", secret: np, params: map[string]string{np.DeprecatedNameKey: "foo"},
			wantErr: "failed to get name and namespace template from params: either name and namespace for NodePublish secrets specified, Both must be specified"},
		{name: "name without namespace", secret: np, params: map[string]string{np.NameKey: "foo"},
			wantErr: "failed to get name and namespace template from params: either name and namespace for NodePublish secrets specified, Both must be specified"},
		{name: "[deprecated] namespace without name", secret: np, params: map[string]string{np.DeprecatedNamespaceKey: "foo"},
			wantErr: "failed to get name and namespace template from params: either name and namespace for NodePublish secrets specified, Both must be specified"},
		{name: "namespace without name", secret: np, params: map[string]string{np.NamespaceKey: "foo"},
			wantErr: "failed to get name and namespace template from params: either name and namespace for NodePublish secrets specified, Both must be specified"},
		{name: "[deprecated] simple - valid", secret: np, params: map[string]string{np.DeprecatedNameKey: "name", np.DeprecatedNamespaceKey: "ns"},
			want: ref("ns", "name")},
		{name: "deprecated and new both", secret: np,
			params:  map[string]string{np.DeprecatedNameKey: "name", np.DeprecatedNamespaceKey: "ns", np.NameKey: "name", np.NamespaceKey: "ns"},
			wantErr: `failed to get name and namespace template from params: NodePublish secrets specified in parameters with both "csi" and "csi.storage.k8s.io/" keys`},
		{name: "deprecated and new names", secret: np,
			params:  map[string]string{np.DeprecatedNameKey: "name", np.DeprecatedNamespaceKey: "ns", np.NameKey: "name"},
			wantErr: `failed to get name and namespace template from params: NodePublish secrets specified in parameters with both "csi" and "csi.storage.k8s.io/" keys`},
		{name: "deprecated and new namespace", secret: np,
			params:  map[string]string{np.DeprecatedNameKey: "name", np.DeprecatedNamespaceKey: "ns", np.NamespaceKey: "ns"},
			wantErr: `failed to get name and namespace template from params: NodePublish secrets specified in parameters with both "csi" and "csi.storage.k8s.io/" keys`},
		{name: "deprecated and new mixed", secret: np, params: map[string]string{np.DeprecatedNameKey: "name", np.NamespaceKey: "ns"},
			want: ref("ns", "name")},
		{name: "simple - valid", secret: np, params: map[string]string{np.NameKey: "name", np.NamespaceKey: "ns"}, want: ref("ns", "name")},
		{name: "simple - valid, pvc name and namespace", secret: prov,
			params: map[string]string{prov.DeprecatedNameKey: "param-name", prov.DeprecatedNamespaceKey: "param-ns"},
			claim:  Claim{Name: "name", Namespace: "ns"}, want: ref("param-ns", "param-name")},
		{name: "simple - invalid name", secret: np, params: map[string]string{np.DeprecatedNameKey: "bad name", np.DeprecatedNamespaceKey: "ns"},
			wantErr: `"bad name" is not a valid secret name`},
		{name: "simple - invalid namespace", secret: np, params: map[string]string{np.DeprecatedNameKey: "name", np.DeprecatedNamespaceKey: "bad ns"},
			wantErr: `"bad ns" is not a valid namespace name`},
		{name: "template - a provisioner name template without namespace is an error", secret: prov,
			params:  map[string]string{prov.NameKey: "static-${pv.name}-${pvc.namespace}-${pvc.name}-${pvc.annotations['akey']}"},
			claim:   Claim{Name: "name", Namespace: "ns"},
			wantErr: "failed to get name and namespace template from params: either name and namespace for Provisioner secrets specified, Both must be specified"},
		{name: "template - PVC annotations are allowed for the provisioner secret", secret: prov,
			params: map[string]string{prov.NamespaceKey: "static-${pvc.namespace}", prov.NameKey: "static-${pvc.name}-${pvc.annotations['akey']}"},
			claim:  Claim{PVName: "pvname", Name: "name", Namespace: "pvcnamespace", Annotations: map[string]string{"akey": "avalue"}},
			want:   ref("static-pvcnamespace", "static-name-avalue")},
		{name: "template - valid node-publish secret ref", secret: np,
			params: map[string]string{np.DeprecatedNameKey: "static-${pv.name}-${pvc.namespace}-${pvc.name}-${pvc.annotations['akey']}",
				np.DeprecatedNamespaceKey: "static-${pv.name}-${pvc.namespace}"},
			claim: annotatedClaim, want: ref("static-pvname-pvcnamespace", "static-pvname-pvcnamespace-pvcname-avalue")},
		{name: "template - valid provisioner secret ref", secret: prov,
			params: map[string]string{prov.DeprecatedNameKey: "static-provisioner-${pv.name}-${pvc.namespace}-${pvc.name}",
				prov.DeprecatedNamespaceKey: "static-provisioner-${pv.name}-${pvc.namespace}"},
			claim: Claim{PVName: "pvname", Name: "pvcname", Namespace: "pvcnamespace"},
			want:  ref("static-provisioner-pvname-pvcnamespace", "static-provisioner-pvname-pvcnamespace-pvcname")},
		{name: "template - valid, with pvc.name", secret: prov,
			params: map[string]string{prov.DeprecatedNameKey: "${pvc.name}", prov.DeprecatedNamespaceKey: "ns"},
			claim:  Claim{Name: "pvcname", Namespace: "pvcns"}, want: ref("ns", "pvcname")},
		{name: "template - valid, provisioner with pvc name and namespace", secret: prov,
			params: map[string]string{prov.DeprecatedNameKey: "${pvc.name}", prov.DeprecatedNamespaceKey: "${pvc.namespace}"},
			claim:  Claim{Name: "pvcname", Namespace: "pvcns"}, want: ref("pvcns", "pvcname")},
		{name: "template - valid, static name and templated namespace", secret: prov,
			params: map[string]string{prov.DeprecatedNameKey: "static-name-1", prov.DeprecatedNamespaceKey: "${pvc.namespace}"},
			claim:  Claim{Name: "name", Namespace: "ns"}, want: ref("ns", "static-name-1")},
		{name: "template - invalid namespace tokens", secret: np,
			params:  map[string]string{np.DeprecatedNameKey: "myname", np.DeprecatedNamespaceKey: "mynamespace${bar}"},
			wantErr: `error resolving value "mynamespace${bar}": invalid tokens: ["bar"]`},
		{name: "template - invalid name tokens", secret: np,
			params:  map[string]string{np.DeprecatedNameKey: "myname${foo}", np.DeprecatedNamespaceKey: "mynamespace"},
			wantErr: `error resolving value "myname${foo}": invalid tokens: ["foo"]`},
	})
}

// Rules every kind shares: the default secret, the tokens each template may
// use, and what the results must be.
func TestResolveTemplates(t *testing.T) {
	claim := Claim{PVName: "pvc-123", Namespace: "test", Name: "foo-testing", Annotations: map[string]string{"team": "blue"}}
	runSecretCases(t, []secretCase{
		{name: "the default secret stands in for a kind the class does not name", secret: ControllerExpandSecret,
			params: map[string]string{DefaultSecret.NameKey: "creds-${pvc.name}", DefaultSecret.NamespaceKey: "${pvc.namespace}"},
			claim:  claim, want: ref("test", "creds-foo-testing")},
		{name: "the default secret stands in for the controller-modify secret too", secret: ControllerModifySecret,
			params: map[string]string{DefaultSecret.NameKey: "creds", DefaultSecret.NamespaceKey: "kube-system"},
			want:   ref("kube-system", "creds")},
		{name: "a kind's own secret wins over the default", secret: ProvisionerSecret,
			params: map[string]string{DefaultSecret.NameKey: "d", DefaultSecret.NamespaceKey: "d", ProvisionerSecret.NameKey: "p", ProvisionerSecret.NamespaceKey: "p"},
			want:   ref("p", "p")},
		{name: "a default secret with only a name is an error", secret: NodeStageSecret,
			params:  map[string]string{DefaultSecret.NameKey: "d"},
			wantErr: "failed to get default name and namespace template from params: either name and namespace for Default secrets specified, Both must be specified"},
		{name: "the controller-modify secret resolves its templates", secret: ControllerModifySecret,
			params: map[string]string{ControllerModifySecret.NameKey: "m-${pvc.annotations['team']}", ControllerModifySecret.NamespaceKey: "${pv.name}"},
			claim:  claim, want: ref("pvc-123", "m-blue")},
		{name: "the claim name is not allowed in a namespace template", secret: NodeStageSecret,
			params: map[string]string{NodeStageSecret.NameKey: "s", NodeStageSecret.NamespaceKey: "${pvc.name}"}, claim: claim,
			wantErr: `error resolving value "${pvc.name}": invalid tokens: ["pvc.name"]`},
		{name: "an annotation the claim does not have is an error", secret: NodePublishSecret,
			params: map[string]string{NodePublishSecret.NameKey: "${pvc.annotations['owner']}", NodePublishSecret.NamespaceKey: "ns"}, claim: claim,
			wantErr: `error resolving value "${pvc.annotations['owner']}": invalid tokens: ["pvc.annotations['owner']"]`},
		{name: "an annotation cannot be resolved without the claim's annotations, as at deletion", secret: ProvisionerSecret,
			params:  map[string]string{ProvisionerSecret.NameKey: "${pvc.annotations['team']}", ProvisionerSecret.NamespaceKey: "ns"},
			claim:   Claim{PVName: "pvc-123", Namespace: "test", Name: "foo-testing"},
			wantErr: `error resolving value "${pvc.annotations['team']}": invalid tokens: ["pvc.annotations['team']"]`},
		{name: "templates expand like a shell: $name without braces", secret: NodeExpandSecret,
			params: map[string]string{NodeExpandSecret.NameKey: "x-$pv", NodeExpandSecret.NamespaceKey: "ns"}, claim: claim,
			wantErr: `error resolving value "x-$pv": invalid tokens: ["pv"]`},
		{name: "a result that is not a valid name is an error", secret: ControllerExpandSecret,
			params: map[string]string{ControllerExpandSecret.NameKey: "Bad_${pvc.name}", ControllerExpandSecret.NamespaceKey: "ns"}, claim: claim,
			wantErr: `"Bad_${pvc.name}" resolved to "Bad_foo-testing" which is not a valid secret name`},
		{name: "a namespace that is not a label is an error", secret: ControllerPublishSecret,
			params: map[string]string{ControllerPublishSecret.NameKey: "s", ControllerPublishSecret.NamespaceKey: "ns-${pv.name}.x"}, claim: claim,
			wantErr: `"ns-${pv.name}.x" resolved to "ns-pvc-123.x" which is not a valid namespace name`},
	})
}

func TestResolveAll(t *testing.T) {
	params := map[string]string{DefaultSecret.NameKey: "d", DefaultSecret.NamespaceKey: "ns",
		NodeStageSecret.DeprecatedNameKey: "stage", NodeStageSecret.DeprecatedNamespaceKey: "ns"}
	got, err := ResolveAll(params, Claim{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(Secrets) {
		t.Errorf("ResolveAll() resolved %d kinds, want all %d: the default secret stands in for every kind", len(got), len(Secrets))
	}
	if *got[NodeStageSecret] != *ref("ns", "stage") || *got[ControllerModifySecret] != *ref("ns", "d") {
		t.Errorf("ResolveAll() = %v", got)
	}
}

// The parameter names are upstream's, letter for letter.
func TestSecretParameterNames(t *testing.T) {
	want := map[string][4]string{
		"Provisioner":       {"csi.storage.k8s.io/provisioner-secret-name", "csi.storage.k8s.io/provisioner-secret-namespace", "csiProvisionerSecretName", "csiProvisionerSecretNamespace"},
		"ControllerPublish": {"csi.storage.k8s.io/controller-publish-secret-name", "csi.storage.k8s.io/controller-publish-secret-namespace", "csiControllerPublishSecretName", "csiControllerPublishSecretNamespace"},
		"NodeStage":         {"csi.storage.k8s.io/node-stage-secret-name", "csi.storage.k8s.io/node-stage-secret-namespace", "csiNodeStageSecretName", "csiNodeStageSecretNamespace"},
		"NodePublish":       {"csi.storage.k8s.io/node-publish-secret-name", "csi.storage.k8s.io/node-publish-secret-namespace", "csiNodePublishSecretName", "csiNodePublishSecretNamespace"},
		"ControllerExpand":  {"csi.storage.k8s.io/controller-expand-secret-name", "csi.storage.k8s.io/controller-expand-secret-namespace"},
		"NodeExpand":        {"csi.storage.k8s.io/node-expand-secret-name", "csi.storage.k8s.io/node-expand-secret-namespace"},
		"ControllerModify":  {"csi.storage.k8s.io/controller-modify-secret-name", "csi.storage.k8s.io/controller-modify-secret-namespace"},
		"Default":           {"csi.storage.k8s.io/secret-name", "csi.storage.k8s.io/secret-namespace"},
	}
	for _, s := range append([]Secret{DefaultSecret}, Secrets...) {
		if got := [4]string{s.NameKey, s.NamespaceKey, s.DeprecatedNameKey, s.DeprecatedNamespaceKey}; got != want[s.Kind] {
			t.Errorf("%s secret parameters = %q, want %q", s.Kind, got, want[s.Kind])
		}
	}
	if len(Secrets) != len(want)-1 {
		t.Errorf("%d secret kinds, want %d", len(Secrets), len(want)-1)
	}
}

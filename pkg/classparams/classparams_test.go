package classparams

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

var claim = Claim{PVName: "pvc-123", Namespace: "test", Name: "foo-testing", Annotations: map[string]string{"team": "blue"}}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		secret  Secret
		params  map[string]string
		want    *v1.SecretReference
		wantErr bool
	}{
		{name: "no secret configured resolves to nil", secret: ProvisionerSecret, params: map[string]string{}},
		{name: "literal name and namespace are kept", secret: ProvisionerSecret,
			params: map[string]string{ProvisionerSecret.NameKey: "creds", ProvisionerSecret.NamespaceKey: "kube-system"},
			want:   &v1.SecretReference{Name: "creds", Namespace: "kube-system"}},
		{name: "claim templates fill in the provisioner secret", secret: ProvisionerSecret,
			params: map[string]string{ProvisionerSecret.NameKey: "${pvc.name}-${pv.name}", ProvisionerSecret.NamespaceKey: "${pvc.namespace}"},
			want:   &v1.SecretReference{Name: "foo-testing-pvc-123", Namespace: "test"}},
		{name: "annotations fill in a node-publish secret", secret: NodePublishSecret,
			params: map[string]string{NodePublishSecret.NameKey: "${pvc.annotations['team']}-key", NodePublishSecret.NamespaceKey: "ns"},
			want:   &v1.SecretReference{Name: "blue-key", Namespace: "ns"}},
		{name: "annotations are not allowed for the provisioner secret", secret: ProvisionerSecret,
			params:  map[string]string{ProvisionerSecret.NameKey: "${pvc.annotations['team']}", ProvisionerSecret.NamespaceKey: "ns"},
			wantErr: true},
		{name: "the claim name is not allowed in a namespace template", secret: NodeStageSecret,
			params:  map[string]string{NodeStageSecret.NameKey: "s", NodeStageSecret.NamespaceKey: "${pvc.name}"},
			wantErr: true},
		{name: "a name without namespace is an error", secret: ControllerPublishSecret,
			params: map[string]string{ControllerPublishSecret.NameKey: "s"}, wantErr: true},
		{name: "a result that is not a valid name is an error", secret: ControllerExpandSecret,
			params:  map[string]string{ControllerExpandSecret.NameKey: "Bad_Name", ControllerExpandSecret.NamespaceKey: "ns"},
			wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.secret, tt.params, claim)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Resolve() error = %v, wantErr %v", err, tt.wantErr)
			}
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("Resolve() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDriverParameters(t *testing.T) {
	got, err := DriverParameters(map[string]string{"type": "ssd", FSTypeKey: "xfs", ProvisionerSecret.NameKey: "s", ProvisionerSecret.NamespaceKey: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["type"] != "ssd" {
		t.Errorf("DriverParameters() = %v, want only the driver's own parameter", got)
	}
	if _, err := DriverParameters(map[string]string{Prefix + "fs-type": "xfs"}); err == nil {
		t.Error("a misspelled reserved parameter must be an error")
	}
}

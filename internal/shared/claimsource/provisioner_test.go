package claimsource

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestProvisionerOf(t *testing.T) {
	for _, tt := range []struct {
		name        string
		annotations map[string]string
		want        string
	}{
		{"the GA annotation names it", map[string]string{AnnStorageProvisioner: "a.example.com"}, "a.example.com"},
		{"the beta annotation names it alone", map[string]string{AnnBetaStorageProvisioner: "b.example.com"}, "b.example.com"},
		{"the GA annotation wins over the beta one", map[string]string{AnnStorageProvisioner: "a.example.com", AnnBetaStorageProvisioner: "b.example.com"}, "a.example.com"},
		{"a claim not handed over yet has none", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations}}
			if got := ProvisionerOf(claim); got != tt.want {
				t.Errorf("ProvisionerOf() = %q, want %q", got, tt.want)
			}
		})
	}
}

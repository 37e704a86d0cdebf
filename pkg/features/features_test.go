package features

import "testing"

func TestCrossNamespaceEnabled(t *testing.T) {
	tests := []struct {
		name  string
		flags string
		want  bool
	}{
		{"is off by default", "", false},
		{"is enabled by its own name", "CrossNamespaceSourceProvisioning=true", true},
		{"is enabled by the upstream alias", "CrossNamespaceVolumeDataSource=true", true},
		{"stays off when explicitly disabled", "CrossNamespaceSourceProvisioning=false", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := NewGate()
			if tt.flags != "" {
				if err := gate.Set(tt.flags); err != nil {
					t.Fatalf("Set(%q): %v", tt.flags, err)
				}
			}
			if got := CrossNamespaceEnabled(gate); got != tt.want {
				t.Errorf("CrossNamespaceEnabled() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUnknownGateIsRejected(t *testing.T) {
	if err := NewGate().Set("NoSuchGate=true"); err == nil {
		t.Fatal("Set accepted an unknown gate")
	}
}

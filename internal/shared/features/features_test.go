package features

import (
	"testing"

	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
)

// gateWith returns a new gate set from a --feature-gates value ("" for none).
func gateWith(t *testing.T, flags string) featuregate.FeatureGate {
	t.Helper()
	gate := NewGate()
	if flags != "" {
		if err := gate.Set(flags); err != nil {
			t.Fatalf("Set(%q): %v", flags, err)
		}
	}
	return gate
}

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
			if got := CrossNamespaceEnabled(gateWith(t, tt.flags)); got != tt.want {
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

func TestUpstreamGates(t *testing.T) {
	tests := []struct {
		name    string
		flags   string
		feature featuregate.Feature
		want    bool
	}{
		{"Topology is GA and on by default", "", Topology, true},
		{"Topology=true, which driver charts pass, is accepted", "Topology=true", Topology, true},
		{"Topology=false is accepted as upstream, which does not lock the gate", "Topology=false", Topology, false},
		{"VolumeAttributesClass is GA and on by default", "", VolumeAttributesClass, true},
		{"VolumeAttributesClass=false, which the EBS chart passes on old clusters, is accepted", "VolumeAttributesClass=false", VolumeAttributesClass, false},
		{"ReleaseLeaderElectionOnExit is alpha and off by default", "", ReleaseLeaderElectionOnExit, false},
		{"ReleaseLeaderElectionOnExit can be enabled", "ReleaseLeaderElectionOnExit=true", ReleaseLeaderElectionOnExit, true},
		{"the logging gates are known", "LoggingAlphaOptions=true", logsapi.LoggingAlphaOptions, true},
		{"several gates are set at once", "Topology=true,CrossNamespaceVolumeDataSource=true", CrossNamespaceVolumeDataSource, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gateWith(t, tt.flags).Enabled(tt.feature); got != tt.want {
				t.Errorf("Enabled(%s) = %v, want %v", tt.feature, got, tt.want)
			}
		})
	}
}

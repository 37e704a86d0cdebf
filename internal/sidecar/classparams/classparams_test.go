package classparams

import (
	"maps"
	"testing"
)

// Cases ported from the upstream csi-provisioner v6.4.0's
// TestStripPrefixedCSIParams.
func TestDriverParameters(t *testing.T) {
	allPrefixed := map[string]string{FSTypeKey: "csiBar", DefaultSecret.NameKey: "csiBar", DefaultSecret.NamespaceKey: "csiBar"}
	deprecated := map[string]string{"fstype": "csiBar"}
	for _, s := range Secrets {
		allPrefixed[s.NameKey], allPrefixed[s.NamespaceKey] = "csiBar", "csiBar"
		if s.DeprecatedNameKey != "" {
			deprecated[s.DeprecatedNameKey], deprecated[s.DeprecatedNamespaceKey] = "csiBar", "csiBar"
		}
	}
	tests := []struct {
		name    string
		params  map[string]string
		want    map[string]string
		wantErr string
	}{
		{name: "parameters without the prefix are passed on",
			params: map[string]string{"csiFoo": "bar", "bim": "baz"}, want: map[string]string{"csiFoo": "bar", "bim": "baz"}},
		{name: "a prefixed secret parameter is stripped",
			params: map[string]string{ControllerPublishSecret.NameKey: "bar", "bim": "baz"}, want: map[string]string{"bim": "baz"}},
		{name: "the prefix in a value does not matter",
			params: map[string]string{"foo": FSTypeKey, "bim": "baz"}, want: map[string]string{"foo": FSTypeKey, "bim": "baz"}},
		{name: "every known prefixed parameter is stripped, the modify and default secrets included",
			params: allPrefixed, want: map[string]string{}},
		{name: "the deprecated unprefixed parameters are passed on",
			params: deprecated, want: deprecated},
		{name: "an unknown prefixed parameter is an error",
			params:  map[string]string{Prefix + "bim": "baz"},
			wantErr: `found unknown parameter key "csi.storage.k8s.io/bim" with reserved namespace csi.storage.k8s.io/`},
		{name: "no parameters", params: map[string]string{}, want: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DriverParameters(tt.params)
			if errText(err) != tt.wantErr {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if err == nil && !maps.Equal(got, tt.want) {
				t.Errorf("DriverParameters() = %v, want %v", got, tt.want)
			}
		})
	}
}

// Cases ported from the upstream csi-provisioner v6.4.0's
// TestFSTypeProvision and the "multiple fsType provision" case.
func TestFSType(t *testing.T) {
	tests := []struct {
		name          string
		params        map[string]string
		defaultFSType string
		want          string
		wantErr       string
	}{
		{name: "no fstype in the class takes the default", defaultFSType: "ext4", want: "ext4"},
		{name: "no fstype and no default is none", want: ""},
		{name: "the deprecated fstype is honored", params: map[string]string{"fstype": "xfs"}, defaultFSType: "ext4", want: "xfs"},
		{name: "the deprecated fsType is honored in any case", params: map[string]string{"fsType": "xfs"}, want: "xfs"},
		{name: "the prefixed key is honored", params: map[string]string{FSTypeKey: "ext3"}, defaultFSType: "ext4", want: "ext3"},
		{name: "an empty value takes the default", params: map[string]string{FSTypeKey: ""}, defaultFSType: "ext4", want: "ext4"},
		{name: "both keys are an error", params: map[string]string{"fstype": "ext3", FSTypeKey: "ext4"},
			wantErr: `fstype specified in parameters with both "fstype" and "csi.storage.k8s.io/fstype" keys`},
		{name: "two spellings of the deprecated key are an error too", params: map[string]string{"fstype": "ext3", "fsType": "ext4"},
			wantErr: `fstype specified in parameters with both "fstype" and "csi.storage.k8s.io/fstype" keys`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FSType(tt.params, tt.defaultFSType)
			if errText(err) != tt.wantErr {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("FSType() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDeprecated(t *testing.T) {
	got := Deprecated(map[string]string{"fsType": "xfs", "csiNodePublishSecretName": "s", "type": "ssd", FSTypeKey: "x"})
	want := []string{`"csiNodePublishSecretName" (use "csi.storage.k8s.io/node-publish-secret-name")`, `"fsType" (use "csi.storage.k8s.io/fstype")`}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Deprecated() = %q, want %q", got, want)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

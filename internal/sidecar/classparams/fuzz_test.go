package classparams

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzParameters checks that the StorageClass parameter and secret-template
// handling never panics on any parameters or claim, and its promises: no
// parameter with the reserved prefix reaches the driver, a class without an
// fsType gets the default, and every resolved secret reference is a valid
// namespace and secret name.
func FuzzParameters(f *testing.F) {
	seeds := [][8]string{
		// key1, value1, key2, value2, then the claim: name, namespace, annotation key and value.
		{ProvisionerSecret.NameKey, "${pvc.name}", ProvisionerSecret.NamespaceKey, "${pvc.namespace}", "restore", "test", "k", "v"},
		{ProvisionerSecret.NameKey, "${pvc.annotations['k']}", ProvisionerSecret.NamespaceKey, "${pv.name}", "restore", "test", "k", "v"},
		{ProvisionerSecret.NameKey, "${pvc.annotations['k']}", ProvisionerSecret.NamespaceKey, "ns", "restore", "test", "k", "Not A Name"},
		{ProvisionerSecret.NameKey, "${pvc.annotations['", ProvisionerSecret.NamespaceKey, "${", "restore", "test", "", ""},
		{ProvisionerSecret.NameKey, "$", ProvisionerSecret.NamespaceKey, "$$", "restore", "test", "k", "v"},
		{ProvisionerSecret.NameKey, "${pvc.name}", ProvisionerSecret.NamespaceKey, "${pvc.name}", strings.Repeat("a", 254), "test", "k", "v"},
		{ProvisionerSecret.NameKey, "${unknown}", ProvisionerSecret.NamespaceKey, "${pvc.namespace}", "restore", "test", "k", "v"},
		{ProvisionerSecret.NameKey, "s", "csiProvisionerSecretName", "t", "restore", "test", "k", "v"},
		{ProvisionerSecret.NameKey, "s", "", "", "restore", "test", "k", "v"},
		{DefaultSecret.NameKey, "s", DefaultSecret.NamespaceKey, "", "restore", "test", "k", "v"},
		{DefaultSecret.NameKey, "ſecret", DefaultSecret.NamespaceKey, "prød", "restore", "test", "k", "v"},
		{FSTypeKey, "ext4", "fsType", "xfs", "restore", "test", "", ""},
		{"FSTYPE", "", FSTypeKey, "", "restore", "test", "", ""},
		{Prefix + "fstype2", "ext4", "other", "x", "restore", "test", "", ""},
		{Prefix, "", Prefix + "/", "", "restore", "test", "", ""},
		{"csiNodePublishSecretNamespace", "${pvc.namespace}", "csiNodePublishSecretName", "${pvc.name}", "restore", "test", "", ""},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])
	}
	f.Fuzz(func(t *testing.T, key1, value1, key2, value2, name, namespace, annotationKey, annotationValue string) {
		params := map[string]string{key1: value1, key2: value2}
		claim := Claim{PVName: "pvc-1234", Namespace: namespace, Name: name, Annotations: map[string]string{annotationKey: annotationValue}}

		driver, err := DriverParameters(params)
		for k := range driver {
			if err == nil && strings.HasPrefix(k, Prefix) {
				t.Fatalf("the reserved parameter %q reaches the driver", k)
			}
		}
		fsType, err := FSType(params, "default-fs")
		hasFSType := false
		for k, v := range params {
			hasFSType = hasFSType || ((k == FSTypeKey || IsLegacyFSTypeKey(k)) && v != "")
		}
		if err == nil && !hasFSType && fsType != "default-fs" {
			t.Fatalf("FSType(%v) = %q without an fsType parameter, want the default", params, fsType)
		}
		_ = Deprecated(params)
		refs, err := ResolveAll(params, claim)
		if err != nil {
			return
		}
		for s, ref := range refs {
			if len(validation.IsDNS1123Label(ref.Namespace)) > 0 || len(validation.IsDNS1123Subdomain(ref.Name)) > 0 {
				t.Fatalf("%s secret resolved to the invalid %s/%s", s.Kind, ref.Namespace, ref.Name)
			}
		}
	})
}

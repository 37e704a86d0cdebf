// Package classparams reads the StorageClass parameters reserved for the
// sidecar: the fsType and the secret references with their ${...}
// templates. It follows the upstream csi-provisioner v6.4.0 to the letter,
// deprecated spellings included, so a StorageClass written for it provisions
// the same volume here. Everything else is passed to the driver untouched.
// The package is pure.
package classparams

import (
	"fmt"
	"slices"
	"strings"
)

// Prefix marks the parameters meant for the sidecar, never for the driver.
const Prefix = "csi.storage.k8s.io/"

// FSTypeKey is the parameter that sets the volume's filesystem type.
const FSTypeKey = Prefix + "fstype"

// legacyFSTypeKey is the deprecated fsType parameter, matched without regard
// to case ("fsType", "fstype", ...) and, unlike FSTypeKey, passed on to the
// driver as well.
const legacyFSTypeKey = "fstype"

// DriverParameters returns the parameters to pass to CreateVolume: all but
// the sidecar's own prefixed ones. The deprecated unprefixed keys (fsType,
// csiProvisionerSecretName, ...) stay, as upstream keeps them for drivers
// that read them. An unknown key with the reserved prefix is an error, so a
// typo does not silently reach the driver or get ignored.
func DriverParameters(params map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(params))
	for k, v := range params {
		if !strings.HasPrefix(k, Prefix) {
			out[k] = v
			continue
		}
		if !known(k) {
			return nil, fmt.Errorf("found unknown parameter key %q with reserved namespace %s", k, Prefix)
		}
	}
	return out, nil
}

func known(key string) bool {
	if key == FSTypeKey || key == DefaultSecret.NameKey || key == DefaultSecret.NamespaceKey {
		return true
	}
	for _, s := range Secrets {
		if key == s.NameKey || key == s.NamespaceKey {
			return true
		}
	}
	return false
}

// FSType returns the filesystem type the class asks for, or defaultFSType
// when it sets none (an empty value counts as none). Both
// csi.storage.k8s.io/fstype and the deprecated fsType (in any case) are
// honored; a class that sets more than one of them is an error.
func FSType(params map[string]string, defaultFSType string) (string, error) {
	fsType, found := "", 0
	for k, v := range params {
		if k == FSTypeKey || IsLegacyFSTypeKey(k) {
			fsType = v
			found++
		}
	}
	if found > 1 {
		return "", fmt.Errorf("fstype specified in parameters with both %q and %q keys", legacyFSTypeKey, FSTypeKey)
	}
	if fsType == "" {
		return defaultFSType, nil
	}
	return fsType, nil
}

// IsLegacyFSTypeKey reports whether key is the deprecated fsType parameter.
func IsLegacyFSTypeKey(key string) bool { return strings.ToLower(key) == legacyFSTypeKey }

// Deprecated returns, sorted, the deprecated parameters the class uses, each
// with the key that replaces it, for a warning in the log.
func Deprecated(params map[string]string) []string {
	var out []string
	for k := range params {
		if IsLegacyFSTypeKey(k) {
			out = append(out, fmt.Sprintf("%q (use %q)", k, FSTypeKey))
		}
		for _, s := range Secrets {
			switch k {
			case s.DeprecatedNameKey:
				out = append(out, fmt.Sprintf("%q (use %q)", k, s.NameKey))
			case s.DeprecatedNamespaceKey:
				out = append(out, fmt.Sprintf("%q (use %q)", k, s.NamespaceKey))
			}
		}
	}
	slices.Sort(out)
	return out
}

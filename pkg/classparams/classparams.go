// Package classparams reads the StorageClass parameters reserved for the
// sidecar (the "csi.storage.k8s.io/" prefix): the fsType and the secret
// references with their ${...} templates. Everything else is passed to the
// driver untouched. The package is pure.
package classparams

import (
	"fmt"
	"regexp"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Prefix marks the parameters meant for the sidecar, never for the driver.
const Prefix = "csi.storage.k8s.io/"

// FSTypeKey is the parameter that sets the volume's filesystem type.
const FSTypeKey = Prefix + "fstype"

// Secret is one kind of secret a StorageClass can reference.
type Secret struct {
	// NameKey and NamespaceKey are the parameters holding the templates.
	NameKey, NamespaceKey string
	// allowClaimName lets the name template use ${pvc.name} and
	// ${pvc.annotations['...']}, which the upstream provisioner allows for
	// every secret but the provisioner's own deletion-time lookups.
	allowClaimName bool
	// allowAnnotations lets the name template use ${pvc.annotations['...']}.
	allowAnnotations bool
}

// The secrets a StorageClass can name, as in the upstream csi-provisioner.
var (
	ProvisionerSecret       = Secret{Prefix + "provisioner-secret-name", Prefix + "provisioner-secret-namespace", true, false}
	ControllerPublishSecret = Secret{Prefix + "controller-publish-secret-name", Prefix + "controller-publish-secret-namespace", true, true}
	NodeStageSecret         = Secret{Prefix + "node-stage-secret-name", Prefix + "node-stage-secret-namespace", true, true}
	NodePublishSecret       = Secret{Prefix + "node-publish-secret-name", Prefix + "node-publish-secret-namespace", true, true}
	ControllerExpandSecret  = Secret{Prefix + "controller-expand-secret-name", Prefix + "controller-expand-secret-namespace", true, true}
	NodeExpandSecret        = Secret{Prefix + "node-expand-secret-name", Prefix + "node-expand-secret-namespace", true, true}
)

// Secrets lists every kind of secret a StorageClass can name.
var Secrets = []Secret{ProvisionerSecret, ControllerPublishSecret, NodeStageSecret, NodePublishSecret, ControllerExpandSecret, NodeExpandSecret}

// SecretRefs are the resolved secret references of a volume by kind; a kind
// the StorageClass does not name is absent.
type SecretRefs map[Secret]*v1.SecretReference

// ResolveAll resolves every secret the StorageClass parameters name.
func ResolveAll(params map[string]string, claim Claim) (SecretRefs, error) {
	refs := SecretRefs{}
	for _, s := range Secrets {
		ref, err := Resolve(s, params, claim)
		if err != nil {
			return nil, err
		}
		if ref != nil {
			refs[s] = ref
		}
	}
	return refs, nil
}

// Claim carries the values the templates may use.
type Claim struct {
	// PVName is the name of the PV being provisioned.
	PVName string
	// Namespace, Name and Annotations describe the claim.
	Namespace, Name string
	Annotations     map[string]string
}

// DriverParameters returns the parameters to pass to CreateVolume: all but
// the sidecar's own. An unknown key with the reserved prefix is an error, so
// a typo does not silently reach the driver or get ignored.
func DriverParameters(params map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(params))
	for k, v := range params {
		if !strings.HasPrefix(k, Prefix) {
			out[k] = v
			continue
		}
		if !known(k) {
			return nil, fmt.Errorf("StorageClass parameter %q is not a parameter this provisioner knows", k)
		}
	}
	return out, nil
}

func known(key string) bool {
	if key == FSTypeKey {
		return true
	}
	for _, s := range Secrets {
		if key == s.NameKey || key == s.NamespaceKey {
			return true
		}
	}
	return false
}

var tokenRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// Resolve returns the secret reference the StorageClass configures for s,
// with its templates filled in from the claim; nil when none is configured.
func Resolve(s Secret, params map[string]string, claim Claim) (*v1.SecretReference, error) {
	nameTmpl, hasName := params[s.NameKey]
	nsTmpl, hasNS := params[s.NamespaceKey]
	if !hasName && !hasNS {
		return nil, nil
	}
	if !hasName || !hasNS {
		return nil, fmt.Errorf("StorageClass must set both %q and %q, or neither", s.NameKey, s.NamespaceKey)
	}
	ns, err := expand(nsTmpl, claim, false, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.NamespaceKey, err)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return nil, fmt.Errorf("%s resolves to %q, not a valid namespace: %s", s.NamespaceKey, ns, strings.Join(errs, "; "))
	}
	name, err := expand(nameTmpl, claim, s.allowClaimName, s.allowAnnotations)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.NameKey, err)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("%s resolves to %q, not a valid secret name: %s", s.NameKey, name, strings.Join(errs, "; "))
	}
	return &v1.SecretReference{Name: name, Namespace: ns}, nil
}

func expand(tmpl string, c Claim, allowClaimName, allowAnnotations bool) (string, error) {
	var firstErr error
	out := tokenRE.ReplaceAllStringFunc(tmpl, func(tok string) string {
		inner := tokenRE.FindStringSubmatch(tok)[1]
		switch {
		case inner == "pv.name":
			return c.PVName
		case inner == "pvc.namespace":
			return c.Namespace
		case inner == "pvc.name" && allowClaimName:
			return c.Name
		case allowAnnotations && strings.HasPrefix(inner, "pvc.annotations['") && strings.HasSuffix(inner, "']"):
			return c.Annotations[strings.TrimSuffix(strings.TrimPrefix(inner, "pvc.annotations['"), "']")]
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("template %q uses %s, which is not allowed here", tmpl, tok)
		}
		return tok
	})
	return out, firstErr
}

package classparams

import (
	"fmt"
	"os"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Secret is one kind of secret a StorageClass can reference.
type Secret struct {
	// Kind names the secret in messages ("Provisioner", "NodePublish"), as
	// upstream does.
	Kind string
	// NameKey and NamespaceKey are the parameters holding the templates.
	NameKey, NamespaceKey string
	// DeprecatedNameKey and DeprecatedNamespaceKey are the unprefixed
	// parameters (csiProvisionerSecretName, ...) that upstream still honors
	// for four kinds; they are also passed to the driver. Empty for the
	// others.
	DeprecatedNameKey, DeprecatedNamespaceKey string
}

// The secrets a StorageClass can name, as in the upstream csi-provisioner.
var (
	ProvisionerSecret       = secret("Provisioner", "provisioner", "csiProvisionerSecret")
	ControllerPublishSecret = secret("ControllerPublish", "controller-publish", "csiControllerPublishSecret")
	NodeStageSecret         = secret("NodeStage", "node-stage", "csiNodeStageSecret")
	NodePublishSecret       = secret("NodePublish", "node-publish", "csiNodePublishSecret")
	ControllerExpandSecret  = secret("ControllerExpand", "controller-expand", "")
	NodeExpandSecret        = secret("NodeExpand", "node-expand", "")
	// ControllerModifySecret is not used by the provisioner itself: its
	// reference goes into PV annotations for the external-resizer's
	// ControllerModifyVolume.
	ControllerModifySecret = secret("ControllerModify", "controller-modify", "")

	// DefaultSecret (csi.storage.k8s.io/secret-name and -namespace) is the
	// fallback of every kind the class does not name itself.
	DefaultSecret = Secret{Kind: "Default", NameKey: Prefix + "secret-name", NamespaceKey: Prefix + "secret-namespace"}
)

// secret spells the parameters of a kind: csi.storage.k8s.io/<key>-secret-name
// and -namespace, and <deprecated>Name and <deprecated>Namespace if it has
// deprecated ones.
func secret(kind, key, deprecated string) Secret {
	s := Secret{Kind: kind, NameKey: Prefix + key + "-secret-name", NamespaceKey: Prefix + key + "-secret-namespace"}
	if deprecated != "" {
		s.DeprecatedNameKey, s.DeprecatedNamespaceKey = deprecated+"Name", deprecated+"Namespace"
	}
	return s
}

// Secrets lists every kind of secret a StorageClass can name.
var Secrets = []Secret{ProvisionerSecret, ControllerPublishSecret, NodeStageSecret, NodePublishSecret,
	ControllerExpandSecret, NodeExpandSecret, ControllerModifySecret}

// SecretRefs are the resolved secret references of a volume by kind; a kind
// the StorageClass does not name is absent.
type SecretRefs map[Secret]*v1.SecretReference

// Claim carries the values the templates may use.
type Claim struct {
	// PVName is the name of the PV being provisioned.
	PVName string
	// Namespace, Name and Annotations describe the claim. At deletion only
	// the namespace and name are known, so a template using an annotation
	// cannot be resolved then.
	Namespace, Name string
	Annotations     map[string]string
}

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

// Resolve returns the secret reference the StorageClass configures for s
// (or, failing that, its default secret), with the templates filled in from
// the claim; nil when none is configured.
//
// As upstream: the namespace template may use ${pv.name} and
// ${pvc.namespace}; the name template also ${pvc.name} and
// ${pvc.annotations['KEY']}, for every kind. Templates follow shell
// expansion ($x and ${x}); an unknown token is an error.
func Resolve(s Secret, params map[string]string, claim Claim) (*v1.SecretReference, error) {
	nameTmpl, nsTmpl, err := templates(s, params)
	if err != nil {
		return nil, fmt.Errorf("failed to get name and namespace template from params: %w", err)
	}
	if nameTmpl == "" && nsTmpl == "" {
		if nameTmpl, nsTmpl, err = templates(DefaultSecret, params); err != nil {
			return nil, fmt.Errorf("failed to get default name and namespace template from params: %w", err)
		}
	}
	if nameTmpl == "" && nsTmpl == "" {
		return nil, nil
	}
	ns, err := expand(nsTmpl, map[string]string{"pv.name": claim.PVName, "pvc.namespace": claim.Namespace})
	if err != nil {
		return nil, err
	}
	if len(validation.IsDNS1123Label(ns)) > 0 {
		return nil, invalidResult(nsTmpl, ns, "namespace")
	}
	name, err := expand(nameTmpl, nameTokens(claim))
	if err != nil {
		return nil, err
	}
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		return nil, invalidResult(nameTmpl, name, "secret")
	}
	return &v1.SecretReference{Name: name, Namespace: ns}, nil
}

// templates returns the name and namespace templates of s, both empty when
// the class names neither. Setting one without the other, a key in both its
// deprecated and its prefixed spelling, or an empty value is an error.
func templates(s Secret, params map[string]string) (name, namespace string, err error) {
	name, names := lookup(params, s.DeprecatedNameKey, s.NameKey)
	namespace, namespaces := lookup(params, s.DeprecatedNamespaceKey, s.NamespaceKey)
	switch {
	case names > 1 || namespaces > 1:
		return "", "", fmt.Errorf("%s secrets specified in parameters with both \"csi\" and %q keys", s.Kind, Prefix)
	case names != namespaces:
		return "", "", fmt.Errorf("either name and namespace for %s secrets specified, Both must be specified", s.Kind)
	case names == 1 && (name == "" || namespace == ""):
		return "", "", fmt.Errorf("%s secrets specified in parameters but value of either namespace or name is empty", s.Kind)
	}
	return name, namespace, nil
}

// lookup returns the value of the last of keys present in params (the
// prefixed spelling wins over the deprecated one) and how many are present.
func lookup(params map[string]string, keys ...string) (value string, found int) {
	for _, k := range keys {
		if v, ok := params[k]; k != "" && ok {
			value = v
			found++
		}
	}
	return value, found
}

func nameTokens(c Claim) map[string]string {
	tokens := map[string]string{"pv.name": c.PVName, "pvc.name": c.Name, "pvc.namespace": c.Namespace}
	for k, v := range c.Annotations {
		tokens["pvc.annotations['"+k+"']"] = v
	}
	return tokens
}

// expand fills in a template; a token without a value is an error.
func expand(tmpl string, tokens map[string]string) (string, error) {
	var missing []string
	out := os.Expand(tmpl, func(token string) string {
		v, ok := tokens[token]
		if !ok {
			missing = append(missing, token)
		}
		return v
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		return "", fmt.Errorf("error resolving value %q: invalid tokens: %q", tmpl, slices.Compact(missing))
	}
	return out, nil
}

func invalidResult(tmpl, resolved, what string) error {
	if tmpl != resolved {
		return fmt.Errorf("%q resolved to %q which is not a valid %s name", tmpl, resolved, what)
	}
	return fmt.Errorf("%q is not a valid %s name", tmpl, what)
}

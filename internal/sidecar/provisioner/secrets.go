package provisioner

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/classparams"
)

// resolveSecrets fills in every secret reference the class configures.
func resolveSecrets(params map[string]string, pvName string, claim *v1.PersistentVolumeClaim) (classparams.SecretRefs, error) {
	return classparams.ResolveAll(params, classparams.Claim{PVName: pvName, Namespace: claim.Namespace, Name: claim.Name, Annotations: claim.Annotations})
}

// readSecret fetches a secret's data for a CSI call. Secrets are read live,
// never cached: the sidecar should not hold every secret of the cluster.
func (p *Provisioner) readSecret(ctx context.Context, ref *v1.SecretReference) (map[string]string, error) {
	if ref == nil {
		return nil, nil
	}
	secret, err := p.client.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("error getting secret %s in namespace %s: %w", ref.Name, ref.Namespace, err)
	}
	data := make(map[string]string, len(secret.Data))
	for k, v := range secret.Data {
		data[k] = string(v)
	}
	return data, nil
}

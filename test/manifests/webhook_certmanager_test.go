package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The optional overlay deploy/overlays/webhook-cert-manager: the webhook
// with its serving certificate from cert-manager.

const certManagerOverlay = "overlays/webhook-cert-manager"

// certManagerObjects are what the overlay adds to deploy/webhook.
var certManagerObjects = []string{"Issuer default/snapshot-validation-webhook-selfsigned", "Certificate default/snapshot-validation-webhook-ca",
	"Issuer default/snapshot-validation-webhook", "Certificate default/snapshot-validation-webhook"}

// issuer and certificate are the fields of cert-manager.io/v1's Issuer
// and Certificate that the overlay sets. The project does not vendor
// cert-manager for its types, so these stand in for them; decoding stays
// strict, so a field the overlay gains must be added here, checked against
// cert-manager's API reference.
type issuer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SelfSigned *struct{} `json:"selfSigned,omitempty"`
		CA         *struct {
			SecretName string `json:"secretName"`
		} `json:"ca,omitempty"`
	} `json:"spec"`
}

type certificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		IsCA       bool     `json:"isCA,omitempty"`
		CommonName string   `json:"commonName,omitempty"`
		SecretName string   `json:"secretName"`
		DNSNames   []string `json:"dnsNames,omitempty"`
		PrivateKey *struct {
			Algorithm      string `json:"algorithm"`
			Size           int    `json:"size"`
			RotationPolicy string `json:"rotationPolicy"`
		} `json:"privateKey,omitempty"`
		IssuerRef struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"issuerRef"`
		Duration    string `json:"duration"`
		RenewBefore string `json:"renewBefore"`
	} `json:"spec"`
}

func init() {
	certManager := schema.GroupVersion{Group: "cert-manager.io", Version: "v1"}
	knownKinds[certManager.WithKind("Issuer")] = func() any { return &issuer{} }
	knownKinds[certManager.WithKind("Certificate")] = func() any { return &certificate{} }
}

// TestWebhookCertManagerOverlay: the certificate is for the Service's DNS
// name, issued by the overlay's CA Issuer into the Secret the Deployment
// mounts, and the webhook configuration asks cert-manager's CA injector
// for that certificate's CA, in the default namespace and with the
// namespace set in the overlay. The CA outlives the serving certificate
// and keeps its key when renewed, so renewing either leaves the caBundle
// that kube-apiserver trusts valid for the pair served (issue 22, defect
// 5: a self-signed serving certificate was its own trust anchor, new at
// each renewal).
func TestWebhookCertManagerOverlay(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		checkCertManagerOverlay(t, kustomize(t, filepath.Join(deployDir, certManagerOverlay)), "default")
	})
	t.Run("namespace set in the overlay", func(t *testing.T) {
		// A copy of deploy/ whose overlay names another namespace, as the
		// overlay's comment says to install elsewhere.
		root := t.TempDir()
		if err := os.CopyFS(root, os.DirFS(deployDir)); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(root, certManagerOverlay, "kustomization.yaml")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		changed := strings.Replace(string(data), "\nkind: Kustomization\n", "\nkind: Kustomization\nnamespace: storage\n", 1)
		if changed == string(data) {
			t.Fatal("the overlay's kustomization has no `kind: Kustomization` line")
		}
		if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
			t.Fatal(err)
		}
		checkCertManagerOverlay(t, kustomize(t, filepath.Join(root, certManagerOverlay)), "storage")
	})
}

func checkCertManagerOverlay(t *testing.T, rendered []manifest, namespace string) {
	t.Helper()
	var (
		cert       *certificate
		certs      = map[string]*certificate{}
		issuers    = map[string]*issuer{}
		service    *v1.Service
		deployment *appsv1.Deployment
		config     *admissionregistrationv1.ValidatingWebhookConfiguration
	)
	for _, m := range rendered {
		switch o := m.obj.(type) {
		case *certificate:
			certs[o.Namespace+"/"+o.Name] = o
			if !o.Spec.IsCA {
				cert = o
			}
		case *issuer:
			issuers[o.Namespace+"/"+o.Name] = o
		case *v1.Service:
			service = o
		case *appsv1.Deployment:
			deployment = o
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			config = o
		}
	}
	if cert == nil || service == nil || deployment == nil || config == nil {
		t.Fatalf("the overlay renders no Certificate, Service, Deployment or ValidatingWebhookConfiguration")
	}
	if service.Namespace != namespace || cert.Namespace != namespace {
		t.Errorf("Service in %q, Certificate in %q, want both in %q", service.Namespace, cert.Namespace, namespace)
	}
	if want := []string{service.Name + "." + namespace + ".svc"}; strings.Join(cert.Spec.DNSNames, ",") != want[0] {
		t.Errorf("certificate dnsNames %q, want %q (the Service kube-apiserver calls)", cert.Spec.DNSNames, want)
	}
	is := issuers[cert.Namespace+"/"+cert.Spec.IssuerRef.Name]
	if cert.Spec.IssuerRef.Kind != "Issuer" || is == nil || is.Spec.CA == nil {
		t.Fatalf("certificate issuer %+v is not a CA Issuer of the overlay in %s", cert.Spec.IssuerRef, cert.Namespace)
	}
	var ca *certificate
	for _, c := range certs {
		if c.Spec.IsCA && c.Spec.SecretName == is.Spec.CA.SecretName {
			ca = c
		}
	}
	if ca == nil {
		t.Fatalf("no CA Certificate of the overlay writes Secret %q, the CA Issuer's", is.Spec.CA.SecretName)
	}
	if root := issuers[ca.Namespace+"/"+ca.Spec.IssuerRef.Name]; root == nil || root.Spec.SelfSigned == nil || ca.Namespace != namespace {
		t.Errorf("CA certificate %s/%s is not issued by a self-signed Issuer of the overlay in %s", ca.Namespace, ca.Name, namespace)
	}
	if ca.Spec.PrivateKey == nil || ca.Spec.PrivateKey.RotationPolicy != "Never" {
		t.Errorf("CA certificate privateKey %+v, want rotationPolicy Never: a renewed CA with a new key would not verify the serving pair it issued", ca.Spec.PrivateKey)
	}
	caLife, serveLife := mustDuration(t, ca.Spec.Duration), mustDuration(t, cert.Spec.Duration)
	if caLife < 10*serveLife {
		t.Errorf("CA lives %v, the serving certificate %v: the CA must outlive its serving certificates many times", caLife, serveLife)
	}
	mounted := ""
	for _, vol := range deployment.Spec.Template.Spec.Volumes {
		if vol.Secret != nil {
			mounted = vol.Secret.SecretName
		}
	}
	if cert.Spec.SecretName == "" || cert.Spec.SecretName != mounted {
		t.Errorf("certificate secretName %q, but the Deployment mounts Secret %q", cert.Spec.SecretName, mounted)
	}
	if got, want := config.Annotations["cert-manager.io/inject-ca-from"], namespace+"/"+cert.Name; got != want {
		t.Errorf("webhook configuration annotation cert-manager.io/inject-ca-from = %q, want %q", got, want)
	}
	for _, hook := range config.Webhooks {
		if ref := hook.ClientConfig.Service; ref == nil || ref.Namespace != namespace || ref.Name != service.Name {
			t.Errorf("webhook %s calls %+v, want the Service %s/%s", hook.Name, ref, namespace, service.Name)
		}
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

package cluster

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
)

// writeServiceAccountKey writes the key kube-apiserver signs service account
// tokens with.
func writeServiceAccountKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	block := &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}
	return os.WriteFile(path, pem.EncodeToMemory(block), 0o600)
}

// User is an identity with a static bearer token.
type User struct {
	Name   string
	Token  string
	Groups []string
}

// The identities of the local cluster. The sidecar authenticates as its
// ServiceAccount's user name, so the ServiceAccount subjects of
// deploy/rbac.yaml apply to it exactly as in a cluster.
var (
	Admin   = User{Name: "admin", Token: "admin-token", Groups: []string{"system:masters"}}
	Sidecar = User{Name: "system:serviceaccount:default:csi-provisioner", Token: "sidecar-token",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}}
)

func writeTokenFile(path string, users ...User) error {
	var b strings.Builder
	for i, u := range users {
		fmt.Fprintf(&b, "%s,%s,uid-%d,\"%s\"\n", u.Token, u.Name, i, strings.Join(u.Groups, ","))
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// writeKubeconfig writes a kubeconfig for user against server.
func writeKubeconfig(path, server string, u User) error {
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: %s
  user:
    token: %s
contexts:
- name: local
  context: {cluster: local, user: %s}
current-context: local
`, server, sanitize(u.Name), u.Token, sanitize(u.Name))
	return os.WriteFile(path, []byte(content), 0o600)
}

func sanitize(s string) string { return strings.NewReplacer(":", "-").Replace(s) }

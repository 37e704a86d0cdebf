// Package servingcerts makes the certificates a test of an HTTPS webhook
// needs: a CA (what kube-apiserver's caBundle or a client trusts), serving
// certificates for 127.0.0.1 and client certificates signed by it, and a
// directory that holds them as the kubelet writes a Secret volume, so that
// a rotation is the atomic symlink swap a webhook sees in a cluster. The snapshot validation
// webhook's unit tests and e2e test use it.
package servingcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA signs serving certificates.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// Pool trusts the CA, for clients.
	Pool *x509.CertPool
	// PEM is the CA certificate, for a webhook configuration's caBundle.
	PEM []byte
}

// NewCA returns a CA valid for a day.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{cert: cert, key: key, Pool: pool, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Issue returns a serving certificate for 127.0.0.1 with serial (which
// tells a client which certificate it was served) and its key, PEM-encoded.
func (ca *CA) Issue(serial int64) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// IssueClient returns a client certificate for name (its common name), as
// kube-apiserver presents one to a webhook that asks for it.
func (ca *CA) IssueClient(name string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// SecretVolume holds a certificate and key as the kubelet writes a Secret
// volume: tls.crt and tls.key are symlinks through ..data to a versioned
// directory, and an update swaps ..data in one rename, then removes the
// previous version.
type SecretVolume struct {
	Dir     string
	n       int
	version string
}

// CertFile and KeyFile are the paths a webhook is given.
func (v *SecretVolume) CertFile() string { return filepath.Join(v.Dir, "tls.crt") }

// KeyFile is the key's path; see CertFile.
func (v *SecretVolume) KeyFile() string { return filepath.Join(v.Dir, "tls.key") }

// Write makes certPEM and keyPEM the volume's files, atomically.
func (v *SecretVolume) Write(certPEM, keyPEM []byte) error {
	v.n++
	version := filepath.Join(v.Dir, fmt.Sprintf("..version%d", v.n))
	if err := os.Mkdir(version, 0o700); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(version, name), data, 0o600); err != nil {
			return err
		}
	}
	tmp := filepath.Join(v.Dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(version), tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(v.Dir, "..data")); err != nil {
		return err
	}
	previous := v.version
	v.version = version
	if previous != "" {
		return os.RemoveAll(previous)
	}
	for _, name := range []string{"tls.crt", "tls.key"} {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(v.Dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// WriteIssued issues a certificate with serial and writes it with its key
// to the volume.
func (v *SecretVolume) WriteIssued(ca *CA, serial int64) error {
	certPEM, keyPEM, err := ca.Issue(serial)
	if err != nil {
		return err
	}
	return v.Write(certPEM, keyPEM)
}

package snapshotwebhook

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA signs serving certificates for 127.0.0.1, as a cluster's CA
// signs the webhook's.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue returns a serving certificate and key for 127.0.0.1 with serial,
// PEM-encoded.
func (ca *testCA) issue(t *testing.T, serial int64) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// secretVolume writes certificates as the kubelet writes a Secret volume:
// tls.crt and tls.key are symlinks through ..data to a timestamped
// directory, and an update swaps ..data atomically.
type secretVolume struct {
	dir     string
	n       int
	version string
}

func (v *secretVolume) certFile() string { return filepath.Join(v.dir, "tls.crt") }
func (v *secretVolume) keyFile() string  { return filepath.Join(v.dir, "tls.key") }

// write makes certPEM and keyPEM the volume's files, in one rename.
func (v *secretVolume) write(t *testing.T, certPEM, keyPEM []byte) {
	t.Helper()
	v.n++
	version := filepath.Join(v.dir, "..version"+time.Now().Format("150405.000000000"))
	must(t, os.Mkdir(version, 0o700))
	must(t, os.WriteFile(filepath.Join(version, "tls.crt"), certPEM, 0o600))
	must(t, os.WriteFile(filepath.Join(version, "tls.key"), keyPEM, 0o600))
	tmp := filepath.Join(v.dir, "..data_tmp")
	must(t, os.Symlink(filepath.Base(version), tmp))
	must(t, os.Rename(tmp, filepath.Join(v.dir, "..data")))
	if v.n == 1 {
		must(t, os.Symlink(filepath.Join("..data", "tls.crt"), v.certFile()))
		must(t, os.Symlink(filepath.Join("..data", "tls.key"), v.keyFile()))
	} else {
		// The kubelet removes the previous version once ..data points
		// to the new one.
		must(t, os.RemoveAll(v.version))
	}
	v.version = version
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

package manifests

// Scenarios from the adversarial review of issue 22's hack/webhook-certs.sh (67918c4): the
// script run against a fake kubectl that records what it writes, and the
// caBundle it patches checked against the pair the replicas still serve
// (the kubelet swaps the Secret volume a minute or so after the Secret
// changes, so for that long the old pair must verify against the new
// caBundle).

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const certScript = "../../hack/webhook-certs.sh"

// fakeKubectl answers the calls hack/webhook-certs.sh makes:
//   - get secret snapshot-validation-webhook-ca: $FAKE_CA_SECRET is
//     "present" (prints ca.crt/ca.key from $FAKE_CA_DIR), "absent"
//     (NotFound) or "flaky" (exists, but this read fails: a timeout);
//   - get validatingwebhookconfiguration: $FAKE_NO_CONFIG set → NotFound;
//     the entries' names, or the first entry's caBundle ($FAKE_BUNDLE);
//   - patch: the -p value is written to $FAKE_OUT/patch.json;
//   - create ... --dry-run=client -o yaml: prints the arguments as a
//     comment, and apply -f - appends its input to $FAKE_OUT/applied.
const fakeKubectl = `#!/usr/bin/env bash
echo "$*" >> "$FAKE_OUT/calls"
args="$*"
case "$args" in
*"get secret snapshot-validation-webhook-ca"*)
	case "$FAKE_CA_SECRET" in
	present)
		case "$args" in
		*ca\\.crt*) base64 -w0 < "$FAKE_CA_DIR/ca.crt" ;;
		*ca\\.key*) base64 -w0 < "$FAKE_CA_DIR/ca.key" ;;
		esac
		exit 0 ;;
	flaky)
		echo "Unable to connect to the server: net/http: TLS handshake timeout" >&2; exit 1 ;;
	*)
		echo 'Error from server (NotFound): secrets "snapshot-validation-webhook-ca" not found' >&2; exit 1 ;;
	esac ;;
*"get validatingwebhookconfiguration"*)
	if [[ -n "$FAKE_NO_CONFIG" ]]; then
		echo 'Error from server (NotFound): validatingwebhookconfigurations.admissionregistration.k8s.io not found' >&2; exit 1
	fi
	case "$args" in
	*caBundle*) printf '%s' "$FAKE_BUNDLE" ;;
	*) printf 'validation-webhook.snapshot.storage.k8s.io\n' ;;
	esac ;;
*"patch validatingwebhookconfiguration"*)
	for a in "$@"; do
		case "$a" in -p=*) printf '%s' "${a#-p=}" > "$FAKE_OUT/patch.json" ;; esac
	done ;;
*"--dry-run=client"*)
	echo "# $args" ;;
"apply -f -")
	cat >> "$FAKE_OUT/applied" ;;
*)
	echo "fake kubectl: unexpected call: $args" >&2; exit 1 ;;
esac
`

// certRun is one run of the script against fakeKubectl.
type certRun struct {
	out    string // $FAKE_OUT
	err    error
	output string
}

// runCertScript runs the script with env (on top of the fake's) and the
// fake kubectl first in PATH.
func runCertScript(t *testing.T, env ...string) certRun {
	t.Helper()
	bin, out := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(fakeKubectl), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", certScript, "webhooks")
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "FAKE_OUT="+out)
	cmd.Env = append(cmd.Env, env...)
	output, err := cmd.CombinedOutput()
	return certRun{out: out, err: err, output: string(output)}
}

// installed is a CA and the pair it issued, as the replicas serve them.
type installed struct {
	dir    string // ca.crt, ca.key, tls.crt, tls.key
	bundle string // base64 of ca.crt, the caBundle kube-apiserver has
}

// install makes a CA and a pair with the script's file-only mode.
func install(t *testing.T) installed {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("bash", certScript, "webhooks")
	cmd.Env = append(os.Environ(), "OUT_DIR="+dir, "NO_KUBECTL=1")
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, output)
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	return installed{dir: dir, bundle: base64.StdEncoding.EncodeToString(ca)}
}

// patchedBundle is the caBundle of every entry the run patched.
func (r certRun) patchedBundle(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.out, "patch.json"))
	if err != nil {
		t.Fatalf("no caBundle patched: %v\n%s", err, r.output)
	}
	var ops []struct {
		Path, Value string
	}
	if err := json.Unmarshal(data, &ops); err != nil || len(ops) == 0 {
		t.Fatalf("patch %s: %v", data, err)
	}
	bundle, err := base64.StdEncoding.DecodeString(ops[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	return bundle
}

// verifies reports whether the serving certificate in certFile verifies
// against bundle for the Service's name, as kube-apiserver checks it.
func verifies(t *testing.T, bundle []byte, certFile string) error {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bundle) {
		t.Fatalf("caBundle holds no certificate")
	}
	data, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "snapshot-validation-webhook.webhooks.svc",
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err
}

// TestCertScriptNeverDropsTheServedPairsCA: a run that makes a new
// CA without ROTATE_CA replaces the caBundle with the new CA alone, while
// the replicas still serve the pair of the CA the caBundle trusted until
// then: kube-apiserver cannot verify them until the kubelet has swapped
// the Secret volume (failed admissions under Fail, unvalidated ones under
// Ignore), the gap issue 22 defect 5 was about. It happens whenever the
// CA Secret cannot be read:
//   - upgrading an install whose CA is not in the Secret (the script
//     before 67918c4 kept no CA; an OUT_DIR install run later without
//     OUT_DIR);
//   - any failed read of an existing CA Secret (a timeout: "kubectl get
//     ... >/dev/null 2>&1" takes every error for "absent"), which also
//     overwrites the CA Secret with the new CA.
func TestCertScriptNeverDropsTheServedPairsCA(t *testing.T) {
	for name, caSecret := range map[string]string{
		"upgrade: no CA Secret yet":      "absent",
		"the CA Secret's read times out": "flaky",
	} {
		t.Run(name, func(t *testing.T) {
			served := install(t)
			run := runCertScript(t, "FAKE_CA_SECRET="+caSecret, "FAKE_CA_DIR="+served.dir, "FAKE_BUNDLE="+served.bundle)
			if caSecret == "flaky" {
				// A CA that cannot be read is not replaced: the script
				// stops, and changes nothing.
				_, patched := os.Stat(filepath.Join(run.out, "patch.json"))
				_, applied := os.Stat(filepath.Join(run.out, "applied"))
				if run.err == nil || patched == nil || applied == nil {
					t.Errorf("the script went on (err %v) or changed something (patch: %v, applied: %v) without its CA:\n%s", run.err, patched == nil, applied == nil, run.output)
				}
				return
			}
			if run.err != nil {
				t.Fatalf("%v\n%s", run.err, run.output)
			}
			if err := verifies(t, run.patchedBundle(t), filepath.Join(served.dir, "tls.crt")); err != nil {
				t.Errorf("the pair the replicas serve until the kubelet swaps the Secret does not verify against the new caBundle: %v", err)
			}
		})
	}
}

// TestCertScriptBeforeTheConfigurationExists: the script's header
// says it may run before `kubectl apply -k deploy/webhook`: "the Secrets
// are created either way; the caBundle needs the configuration to exist".
// Under set -o pipefail the count of the configuration's entries fails,
// and the script exits before it creates the serving Secret.
func TestCertScriptBeforeTheConfigurationExists(t *testing.T) {
	run := runCertScript(t, "FAKE_CA_SECRET=absent", "FAKE_NO_CONFIG=1")
	applied, _ := os.ReadFile(filepath.Join(run.out, "applied"))
	if !strings.Contains(string(applied), "create secret tls snapshot-validation-webhook-tls") {
		t.Errorf("run before the configuration exists (exit %v): the serving Secret was not created, the header says it is\n%s", run.err, run.output)
	}
}

// TestCertScriptCAKeyFromTheSecretIsPrivate: with OUT_DIR the CA
// key read back from the Secret is written with the shell's umask
// (0644 under the usual 022), where openssl writes its keys 0600.
func TestCertScriptCAKeyFromTheSecretIsPrivate(t *testing.T) {
	served := install(t)
	out := filepath.Join(t.TempDir(), "certs")
	run := runCertScript(t, "FAKE_CA_SECRET=present", "FAKE_CA_DIR="+served.dir, "FAKE_BUNDLE="+served.bundle, "OUT_DIR="+out)
	if run.err != nil {
		t.Fatalf("%v\n%s", run.err, run.output)
	}
	for _, f := range []string{"ca.key", "tls.key"} {
		st, err := os.Stat(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s in OUT_DIR is %v, readable by others", f, st.Mode().Perm())
		}
	}
}

// TestCertScriptHolds: what holds (passes today): a renewal
// reuses the CA Secret's CA, so the caBundle verifies both the pair served
// and the new one; ROTATE_CA keeps the old CA in the caBundle next to the
// new one; without OUT_DIR no file is left behind.
func TestCertScriptHolds(t *testing.T) {
	t.Run("renewal", func(t *testing.T) {
		served := install(t)
		tmp := t.TempDir()
		run := runCertScript(t, "FAKE_CA_SECRET=present", "FAKE_CA_DIR="+served.dir, "FAKE_BUNDLE="+served.bundle, "TMPDIR="+tmp)
		if run.err != nil {
			t.Fatalf("%v\n%s", run.err, run.output)
		}
		if err := verifies(t, run.patchedBundle(t), filepath.Join(served.dir, "tls.crt")); err != nil {
			t.Error(err)
		}
		if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
			t.Errorf("files left in TMPDIR: %v", entries)
		}
		if applied, _ := os.ReadFile(filepath.Join(run.out, "applied")); strings.Contains(string(applied), "snapshot-validation-webhook-ca") {
			t.Errorf("a renewal rewrote the CA Secret")
		}
	})
	t.Run("ROTATE_CA", func(t *testing.T) {
		served := install(t)
		run := runCertScript(t, "FAKE_CA_SECRET=present", "FAKE_CA_DIR="+served.dir, "FAKE_BUNDLE="+served.bundle, "ROTATE_CA=1")
		if run.err != nil {
			t.Fatalf("%v\n%s", run.err, run.output)
		}
		if err := verifies(t, run.patchedBundle(t), filepath.Join(served.dir, "tls.crt")); err != nil {
			t.Error(err)
		}
	})
}

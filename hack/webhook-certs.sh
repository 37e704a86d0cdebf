#!/usr/bin/env bash
# Certificates for the snapshot validation webhook (deploy/webhook) without
# cert-manager: a CA that outlives its serving certificates, and a serving
# key pair it issues, with openssl. Stores the pair in the Secret
# snapshot-validation-webhook-tls of the webhook's namespace and the CA in
# the ValidatingWebhookConfiguration's caBundle.
#
#   hack/webhook-certs.sh [namespace]     # default: default
#
# Run it after `kubectl apply -k deploy/webhook` (or before: the Secrets are
# created either way; the caBundle needs the configuration to exist).
#
# Run it again to renew the serving pair: the CA is reused (kept in the
# Secret snapshot-validation-webhook-ca, or in OUT_DIR), so the caBundle
# kube-apiserver trusts does not change and every admission in between
# verifies; the webhook reloads the new pair from its Secret volume without
# a restart. The caBundle is written before the pair, so even the first
# run (and a CA rotation) never serves a pair kube-apiserver cannot verify.
#
# ROTATE_CA=1 makes a new CA: the caBundle then trusts both the new CA and
# the old one until the next run without ROTATE_CA, by which time every
# replica serves the new pair.
#
# OUT_DIR=<dir> writes the files there and keeps them, and reuses a CA
# found there (ca.crt and ca.key); without it a temporary directory is
# used and removed. NO_KUBECTL=1 only writes the files. DAYS sets the
# serving pair's validity (default 365), CA_DAYS the CA's (default 3650).
# EXTRA_SANS adds subjectAltName entries, e.g. IP:127.0.0.1.
set -euo pipefail
# Keys are written for their owner only.
umask 077

namespace=${1:-default}
service=snapshot-validation-webhook
secret=snapshot-validation-webhook-tls
ca_secret=snapshot-validation-webhook-ca
configuration=validation-webhook.snapshot.storage.k8s.io
days=${DAYS:-365}
ca_days=${CA_DAYS:-3650}

if [[ -n "${OUT_DIR:-}" ]]; then
	dir=$OUT_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi
kubectl_mode() { [[ -z "${NO_KUBECTL:-}" ]]; }

# The CA: OUT_DIR's, else the CA Secret's, else (or with ROTATE_CA) a new one.
# A Secret that cannot be read (other than NotFound) stops the script: a
# new CA would replace a CA the replicas' pairs may still be issued by.
new_ca=
if [[ -n "${ROTATE_CA:-}" ]] || [[ ! -s "$dir/ca.crt" || ! -s "$dir/ca.key" ]]; then
	if [[ -z "${ROTATE_CA:-}" ]] && kubectl_mode && crt=$(kubectl -n "$namespace" get secret "$ca_secret" -o jsonpath='{.data.ca\.crt}' 2>"$dir/err"); then
		key=$(kubectl -n "$namespace" get secret "$ca_secret" -o jsonpath='{.data.ca\.key}')
		base64 -d <<<"$crt" > "$dir/ca.crt"
		base64 -d <<<"$key" > "$dir/ca.key"
	elif [[ -z "${ROTATE_CA:-}" ]] && kubectl_mode && ! grep -q NotFound "$dir/err"; then
		cat "$dir/err" >&2
		echo "Cannot read Secret $namespace/$ca_secret; nothing was changed" >&2
		exit 1
	else
		openssl req -x509 -newkey rsa:2048 -nodes -days "$ca_days" -subj "/CN=${service}-ca-$(date +%s)" \
			-keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
		new_ca=1
	fi
fi

openssl req -newkey rsa:2048 -nodes -subj "/CN=${service}.${namespace}.svc" \
	-keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
# kube-apiserver checks the DNS name of the Service it calls.
sans="DNS:$service,DNS:$service.$namespace,DNS:$service.$namespace.svc,DNS:$service.$namespace.svc.cluster.local"
if [[ -n "${EXTRA_SANS:-}" ]]; then
	sans="$sans,$EXTRA_SANS"
fi
printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n' "$sans" > "$dir/tls.ext"
# A random serial: each renewal's pair is told apart from the last.
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -set_serial "0x$(openssl rand -hex 16)" \
	-days "$days" -extfile "$dir/tls.ext" -out "$dir/tls.crt" 2>/dev/null
openssl verify -CAfile "$dir/ca.crt" "$dir/tls.crt" >/dev/null

if ! kubectl_mode; then
	echo "Wrote ca.crt, ca.key, tls.crt and tls.key to $dir"
	exit 0
fi

if [[ -n "$new_ca" ]]; then
	kubectl -n "$namespace" create secret generic "$ca_secret" --from-file=ca.crt="$dir/ca.crt" --from-file=ca.key="$dir/ca.key" \
		--dry-run=client -o yaml | kubectl apply -f -
fi
# The caBundle first. With a new CA (the first run, an install from before
# the CA was kept, ROTATE_CA), also what it trusted so far: the replicas
# serve their current pair until the kubelet swaps the Secret volume. A
# run that reuses the CA trusts it alone, dropping a CA rotated out.
if kubectl get validatingwebhookconfiguration "$configuration" -o name >/dev/null 2>"$dir/err"; then
	cp "$dir/ca.crt" "$dir/bundle.crt"
	if [[ -n "$new_ca" ]]; then
		old=$(kubectl get validatingwebhookconfiguration "$configuration" -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
		base64 -d <<<"$old" >> "$dir/bundle.crt"
	fi
	bundle=$(base64 < "$dir/bundle.crt" | tr -d '\n')
	# Every entry: deploy/overlays/webhook-guard adds a second one.
	entries=$(kubectl get validatingwebhookconfiguration "$configuration" -o jsonpath='{range .webhooks[*]}{.name}{"\n"}{end}' | wc -l)
	ops=()
	for ((i = 0; i < entries; i++)); do
		ops+=("{\"op\": \"add\", \"path\": \"/webhooks/$i/clientConfig/caBundle\", \"value\": \"$bundle\"}")
	done
	kubectl patch validatingwebhookconfiguration "$configuration" --type=json -p="[$(IFS=,; echo "${ops[*]}")]"
elif grep -q NotFound "$dir/err"; then
	echo "ValidatingWebhookConfiguration $configuration does not exist yet: run this again after kubectl apply -k deploy/webhook to set its caBundle"
else
	cat "$dir/err" >&2
	exit 1
fi
kubectl -n "$namespace" create secret tls "$secret" --cert="$dir/tls.crt" --key="$dir/tls.key" \
	--dry-run=client -o yaml | kubectl apply -f -
echo "Secret $namespace/$secret and the caBundle of $configuration are set (CA in Secret $namespace/$ca_secret)"

#!/usr/bin/env bash
# Certificates for the snapshot validation webhook (deploy/webhook) without
# cert-manager: creates a CA and a serving key pair with openssl, stores the
# pair in the Secret snapshot-validation-webhook-tls of the webhook's
# namespace, and puts the CA into the ValidatingWebhookConfiguration's
# caBundle.
#
#   hack/webhook-certs.sh [namespace]     # default: default
#
# Run it after `kubectl apply -k deploy/webhook` (or before: the Secret is
# created either way; the caBundle needs the configuration to exist). Run
# it again to renew: the webhook reloads the new pair from its Secret
# volume without a restart, and kube-apiserver trusts the new CA as soon as
# the caBundle is patched (the pair is replaced first, so requests in
# between fail the TLS check: with failurePolicy Ignore they are allowed).
#
# OUT_DIR=<dir> writes the files there and keeps them; without it a
# temporary directory is used and removed. NO_KUBECTL=1 only writes them.
# DAYS sets the validity (default 365).
set -euo pipefail

namespace=${1:-default}
service=snapshot-validation-webhook
secret=snapshot-validation-webhook-tls
configuration=validation-webhook.snapshot.storage.k8s.io
days=${DAYS:-365}

if [[ -n "${OUT_DIR:-}" ]]; then
	dir=$OUT_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi

openssl req -x509 -newkey rsa:2048 -nodes -days "$days" -subj "/CN=${service}-ca" \
	-keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=${service}.${namespace}.svc" \
	-keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
# kube-apiserver checks the DNS name of the Service it calls.
printf 'subjectAltName=DNS:%s,DNS:%s.%s,DNS:%s.%s.svc,DNS:%s.%s.svc.cluster.local\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n' \
	"$service" "$service" "$namespace" "$service" "$namespace" "$service" "$namespace" > "$dir/tls.ext"
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
	-days "$days" -extfile "$dir/tls.ext" -out "$dir/tls.crt" 2>/dev/null
openssl verify -CAfile "$dir/ca.crt" "$dir/tls.crt" >/dev/null

if [[ -n "${NO_KUBECTL:-}" ]]; then
	echo "Wrote ca.crt, tls.crt and tls.key to $dir"
	exit 0
fi

kubectl -n "$namespace" create secret tls "$secret" --cert="$dir/tls.crt" --key="$dir/tls.key" \
	--dry-run=client -o yaml | kubectl apply -f -
bundle=$(base64 < "$dir/ca.crt" | tr -d '\n')
# Every entry: deploy/overlays/webhook-guard adds a second one.
entries=$(kubectl get validatingwebhookconfiguration "$configuration" -o jsonpath='{range .webhooks[*]}{.name}{"\n"}{end}' | wc -l)
ops=()
for ((i = 0; i < entries; i++)); do
	ops+=("{\"op\": \"add\", \"path\": \"/webhooks/$i/clientConfig/caBundle\", \"value\": \"$bundle\"}")
done
kubectl patch validatingwebhookconfiguration "$configuration" --type=json -p="[$(IFS=,; echo "${ops[*]}")]"
echo "Secret $namespace/$secret and the caBundle of $configuration are set"

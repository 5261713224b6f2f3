#!/usr/bin/env bash
# Prints the path of this machine's CA bundle, the first of the places trainpack itself looks
# (net/http_client.cpp, system_ca_file), for the release packages that ship a copy of it; fails when there is none.
set -euo pipefail
for f in "${SSL_CERT_FILE:-}" /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt \
         /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem /etc/ssl/ca-bundle.pem /etc/ssl/cert.pem; do
  if [[ -n "$f" && -s "$f" && -r "$f" ]]; then printf '%s\n' "$f"; exit 0; fi
done
echo "${0##*/}: no CA bundle on this host (install ca-certificates)" >&2
exit 1

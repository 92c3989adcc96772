#!/bin/bash
# test_update_sigstore_ca.sh: ClusterVersion spec.signatureStores over TLS with a private CA (openshift/api SignatureStore.ca: ConfigMap openshift-config/<ca.name>, key ca.crt; without it the cluster's trusted-ca-bundle, as the CVO's getTLSConfig), in the own updater and in the --via-cvo pre-flight.
# al-tier: slow
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"
al_require_airlock
up_require_update
command -v openssl >/dev/null || al_skip "no openssl to make a CA and a TLS server"

S=$T/store
up_store "$S" || { al_fail "mirror the sample release"; al_finish; }
D=$(up_digest "$S" 4.14.1)
up_sign "$S" "$D" || { al_fail "sign the sample release with gpg"; al_finish; }
# the signature only in the TLS store, not in airlock's own store
mkdir -p "$T/www"
mv "$S/signatures" "$T/www/files"

# a private CA and a server certificate for 127.0.0.1
C=$T/certs
mkdir -p "$C"
E="-newkey rsa:2048 -nodes"
(cd "$C" && openssl req -x509 $E -keyout ca.key -out ca.pem -days 2 -subj /CN=sigstore-test-ca &&
	openssl req $E -keyout srv.key -out srv.csr -subj /CN=127.0.0.1 &&
	printf 'subjectAltName=IP:127.0.0.1\n' >srv.ext &&
	openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile srv.ext) >/dev/null 2>&1 ||
	{ al_fail "make the CA and the server certificate"; al_finish; }

# an HTTPS static store on 127.0.0.1: what it was asked is in $T/seen
PF=$T/sig-port
python3 - "$T/www" "$C/srv.pem" "$C/srv.key" "$PF" "$T/seen" <<'EOPY' 2>>"$T/sigserver.log" &
import functools, http.server, os, ssl, sys
root, cert, key, pf, seen = sys.argv[1:6]
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        with open(seen, "a") as f:
            f.write(self.path + "\n")
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(H, directory=root))
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(pf + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(pf + ".tmp", pf)
srv.serve_forever()
EOPY
AL_PIDS+=("$!")
for i in $(seq 1 100); do [ -s "$PF" ] && break; sleep 0.05; done
[ -s "$PF" ] || { al_fail "start the TLS signature store"; al_finish; }
URL="https://127.0.0.1:$(cat "$PF")/files"

# real time: the TLS handshakes take real time (under ASan more than a
# virtual clock gives the signature budget), and nothing here waits long
up_ks_start --co-delay 0.1
K=(--kubeconfig "$T/kubeconfig" --operator-poll 100ms --keyring "$T/trusted.gpg")
seed() { up_ctl objects "{\"object\": $1}" >/dev/null; }
CAPEM=$(python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read()))' "$C/ca.pem")
# cluster STORES-JSON: a fresh cluster whose ClusterVersion has those stores
cluster() {
	up_ctl reset '{}' >/dev/null
	rm -f "$T/seen"
	for ns in openshift-config openshift-config-managed; do
		seed "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}"
	done
	seed '{"apiVersion":"config.openshift.io/v1","kind":"ClusterVersion","metadata":{"name":"version"},"spec":{"clusterID":"x","signatureStores":'"$1"'},"status":{"desired":{"version":"4.14.0","image":"i"},"history":[],"conditions":[]}}'
}
ca_cm() { # NS NAME KEY
	seed "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$2\",\"namespace\":\"$1\"},\"data\":{\"$3\":$CAPEM}}"
}
asked() { [ -s "$T/seen" ] && grep -c "sha256=" "$T/seen" || echo 0; }

# --- own updater: ca.name names the CA, the store verifies over TLS ----------
cluster '[{"url":"'"$URL"'","ca":{"name":"sig-ca"}}]'
ca_cm openshift-config sig-ca ca.crt
al_run "$T/o1" "$T/e1" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --dry-run
al_check "own: the TLS store with its ca.name CA verifies the release" [ "$AL_RC" = 0 ]
al_check "own: ... from spec.signatureStores" grep -qF "signature verified (spec.signatureStores '$URL')" "$T/e1"
al_check "own: ... the store was asked for the digest" [ "$(asked)" -ge 1 ]

# --- a ca.name whose ConfigMap lacks ca.crt: the store is not honoured --------
cluster '[{"url":"'"$URL"'","ca":{"name":"sig-ca"}}]'
ca_cm openshift-config sig-ca ca-bundle.crt
al_run "$T/o2" "$T/e2" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --dry-run
al_check "own: a CA ConfigMap without ca.crt: the release is not accepted" [ "$AL_RC" != 0 ]
al_check "own: ... the store is not honoured, and said why" grep -qF "signature store '$URL' not honoured: its CA (ca.name sig-ca): ConfigMap openshift-config/sig-ca has no key ca.crt" "$T/e2"
al_check "own: ... and it was never asked" [ "$(asked)" = 0 ]
cluster '[{"url":"'"$URL"'","ca":{"name":"missing"}}]'
al_run "$T/o2b" "$T/e2b" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --dry-run
al_check "own: a ca.name ConfigMap that does not exist: not honoured either" bash -c "[ $AL_RC != 0 ] && grep -qF \"signature store '$URL' not honoured: its CA (ca.name missing)\" '$T/e2b'"

# --- no ca: the default roots do not know the private CA ---------------------
cluster '[{"url":"'"$URL"'"}]'
al_run "$T/o3" "$T/e3" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --dry-run
al_check "own: without a CA the private certificate is not trusted (not accepted)" [ "$AL_RC" != 0 ]
al_check "own: ... and no signature request got through" [ "$(asked)" = 0 ]
# ... unless the cluster's trusted CA bundle has it (the CVO's getTLSConfig)
cluster '[{"url":"'"$URL"'"}]'
ca_cm openshift-config-managed trusted-ca-bundle ca-bundle.crt
al_run "$T/o4" "$T/e4" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --dry-run
al_check "own: without ca, openshift-config-managed/trusted-ca-bundle is trusted" bash -c "[ $AL_RC = 0 ] && grep -qF \"signature verified (spec.signatureStores '$URL')\" '$T/e4'"

# --- the --via-cvo pre-flight checks the signature the same way ----------------
cluster '[{"url":"'"$URL"'","ca":{"name":"sig-ca"}}]'
ca_cm openshift-config sig-ca ca.crt
up_seed_cvo 1
al_run "$T/o5" "$T/e5" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --via-cvo --dry-run --tls-verify=false
al_check "via-cvo: the pre-flight verifies the signature from the TLS store with its CA" grep -qF "signature verified (spec.signatureStores '$URL')" "$T/e5"
al_check "via-cvo: ... and does not call the signature missing" bash -c "! grep -q 'no signature for' '$T/e5'"
cluster '[{"url":"'"$URL"'","ca":{"name":"sig-ca"}}]'
ca_cm openshift-config sig-ca ca-bundle.crt
up_seed_cvo 1
al_run "$T/o6" "$T/e6" "$AIRLOCK" update --store "$S" --to 4.14.1 "${K[@]}" --via-cvo --dry-run --tls-verify=false
al_check "via-cvo: a store whose CA is not found is not honoured: the pre-flight fails (exit 3)" [ "$AL_RC" = 3 ]
al_check "via-cvo: ... naming the store and its CA" grep -qF "signature store '$URL' not honoured: its CA (ca.name sig-ca)" "$T/e6"

al_finish

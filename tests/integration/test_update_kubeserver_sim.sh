#!/bin/bash
# test_update_kubeserver_sim.sh: the test API server's CVO-rules section: a CRD's kinds are served once it is Established, Jobs complete, status-sim writes the status steps it is given; its timers on the virtual clock (time moves only when a request's X-Airlock-Test-Clock says so, so no load can make a delay pass early or late).
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/update_lib.sh"

UP_VIRTUAL_CLOCK=1 up_ks_start --crd-delay 8.0 --job-delay 8.0
VT=1000000
tick() { # SECONDS: move the server's virtual clock (what an airlock run's requests do)
	VT=$((VT + $1))
	curl -s -o /dev/null -H "X-Airlock-Test-Clock: $VT" "$KS_URL/version"
}
tick 0
apply() { # PATH JSON
	curl -s -o "$T/body" -w '%{http_code}' -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
		-d "$2" "$KS_URL$1?fieldManager=test"
}
field() { # PATH EXPR (d = the object)
	python3 -c 'import json,sys,urllib.request
try:
    d = json.load(urllib.request.urlopen(sys.argv[1] + sys.argv[2]))
except Exception as e:
    d = None
print(eval(sys.argv[3]))' "$KS_URL" "$1" "$2"
}
CRD='{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.airlock.io"},"spec":{"group":"example.airlock.io","scope":"Cluster","names":{"kind":"Gadget","plural":"gadgets"},"versions":[{"name":"v1","served":true,"storage":true}]}}'
al_check "a CRD is created" [ "$(apply /apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.airlock.io "$CRD")" = 201 ]
al_check "before --crd-delay its kind is not served (404)" \
	[ "$(apply /apis/example.airlock.io/v1/gadgets/g1 '{"apiVersion":"example.airlock.io/v1","kind":"Gadget","metadata":{"name":"g1"}}')" = 404 ]
al_check "... nor in discovery" [ "$(curl -s -o /dev/null -w '%{http_code}' "$KS_URL/apis/example.airlock.io/v1")" = 404 ]
al_check "... and the CRD is not Established yet" \
	[ "$(field /apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.airlock.io '(d.get("status") or {}).get("conditions")')" = None ]
tick 7999
al_check "1 ms before --crd-delay: still not Established" \
	[ "$(field /apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.airlock.io '(d.get("status") or {}).get("conditions")')" = None ]
tick 1
al_check "after it: Established=True" \
	[ "$(field /apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.airlock.io '[c["status"] for c in d["status"]["conditions"] if c["type"] == "Established"]')" = "['True']" ]
al_check "... and the kind is served" \
	[ "$(apply /apis/example.airlock.io/v1/gadgets/g1 '{"apiVersion":"example.airlock.io/v1","kind":"Gadget","metadata":{"name":"g1"}}')" = 201 ]
JOB='{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default"},"spec":{}}'
al_check "a Job is created" [ "$(apply /apis/batch/v1/namespaces/default/jobs/j "$JOB")" = 201 ]
al_check "... active at once" [ "$(field /apis/batch/v1/namespaces/default/jobs/j 'd["status"]')" = "{'active': 1}" ]
tick 7999
al_check "... not before --job-delay" [ "$(field /apis/batch/v1/namespaces/default/jobs/j 'd["status"]')" = "{'active': 1}" ]
tick 1
al_check "... succeeded after --job-delay" [ "$(field /apis/batch/v1/namespaces/default/jobs/j 'd["status"]["succeeded"]')" = 1 ]
up_ctl status-sim '{"kind": "Deployment", "namespace": "default", "name": "d", "steps": [{"after": 0, "status": {"replicas": 0}}, {"after": 8.0, "status": {"replicas": 1}}]}' >/dev/null
al_check "a Deployment with a status-sim setting is created" \
	[ "$(apply /apis/apps/v1/namespaces/default/deployments/d '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"default"},"spec":{"replicas":1}}')" = 201 ]
al_check "... the first step at once" [ "$(field /apis/apps/v1/namespaces/default/deployments/d 'd["status"]["replicas"]')" = 0 ]
tick 8000
al_check "... the next one after its delay" [ "$(field /apis/apps/v1/namespaces/default/deployments/d 'd["status"]["replicas"]')" = 1 ]
al_check "another Deployment gets no status" \
	[ "$(apply /apis/apps/v1/namespaces/default/deployments/e '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"e","namespace":"default"},"spec":{"replicas":1}}')" = 201 ]
al_check "... (none written)" [ "$(field /apis/apps/v1/namespaces/default/deployments/e 'd.get("status")')" = None ]
up_ctl status-sim '{"kind": "CustomResourceDefinition", "name": "never.example.airlock.io", "steps": []}' >/dev/null
apply /apis/apiextensions.k8s.io/v1/customresourcedefinitions/never.example.airlock.io \
	'{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"never.example.airlock.io"},"spec":{"group":"never.airlock.io","scope":"Cluster","names":{"kind":"Never","plural":"nevers"},"versions":[{"name":"v1","served":true,"storage":true}]}}' >/dev/null
tick 3600000
al_check "a CRD whose setting has no steps is never Established, its kind never served" \
	[ "$(apply /apis/never.airlock.io/v1/nevers/n '{"apiVersion":"never.airlock.io/v1","kind":"Never","metadata":{"name":"n"}}')" = 404 ]
al_check "reset drops the settings" up_ctl reset '{}'
al_finish

#!/usr/bin/env bash
# mirror_latency.sh: benchmark: airlock mirror and push (and optionally an operator catalog mirror) at --parallel 1..16 against parallel skopeo loops, through a loopback proxy that adds a WAN-like round trip to every request, in interleaved rounds.
# Not run by ctest. See tests/bench/README.md. Prints ratios measured in this run only.
#
# A synthetic release (tests/tools/mkrelease.py, small layers: the time is
# round trips, not bytes) is pushed with skopeo into a loopback
# docker-registry. tests/tools/tcpfault.py --latency-ms sits in front of
# it: every new connection and every request waits BENCH_LATENCY_MS before
# it is forwarded. Through that proxy, in each round (tests/bench/lib.sh
# rotates the order):
#   mirror_pN    airlock mirror of the release into an empty store, --parallel N
#   skopeo_mirror  BENCH_SKOPEO_LOOPS skopeo copy loops side by side, each
#                into an OCI layout of its own (the fastest way skopeo does
#                a mirror: several processes writing one layout corrupt its
#                index.json)
#   push_pN      airlock push of a store of the release, --parallel N, into
#                a repository prefix not used before (nothing to skip)
#   skopeo_push  BENCH_SKOPEO_LOOPS skopeo copy loops from the release's
#                OCI layout, each loop into a new prefix of its own
# With BENCH_CATALOG_BUNDLES=N (default off; or "catalog" in BENCH_WHAT, 50
# bundles), also an operator catalog (tests/tools/mkcatalog.py --bundles N
# --images: package big, N bundles, each a bundle, an operator and 3
# operand images of BENCH_CATALOG_IMAGE_SIZE bytes) is pushed with skopeo,
# the catalog image too, and through the same proxy:
#   catalog_pN   airlock mirror with mirror.operators[] (full: true, package
#                big: every bundle) into an empty store, --parallel N
#   skopeo_catalog  BENCH_SKOPEO_LOOPS skopeo copy loops over the same
#                images (the catalog and every image of package big), each
#                into an OCI layout of its own
# Every skopeo copy has --retry-times 3: docker-registry sometimes answers
# 500 when several loops upload the shared base layer into one repository
# at once; each push loop also pushes into a prefix of its own.
# It prints each airlock mode against the fastest peer, the median time of
# each --parallel, and the fastest --parallel of mirror and of push.
set -euo pipefail
set -a # the timed run_* functions run in a child shell: they see exported variables

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AL_SOURCE_DIR=${AL_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
AL_BUILD_DIR=${AL_BUILD_DIR:-$AL_SOURCE_DIR/build}
AIRLOCK=${AIRLOCK:-$AL_BUILD_DIR/airlock}
COMPONENTS=${BENCH_COMPONENTS:-60}
LAYER_SIZE=${BENCH_LAYER_SIZE:-100000}
BASE_SIZE=${BENCH_BASE_SIZE:-2000000}
LATENCY_MS=${BENCH_LATENCY_MS:-20}
PARALLELS=${BENCH_PARALLELS:-1 2 4 8 16}
LOOPS=${BENCH_SKOPEO_LOOPS:-6}
ROUNDS=${BENCH_ROUNDS:-3}
WHAT=${BENCH_WHAT:-mirror push}
SEED=${BENCH_SEED:-latency}
CATALOG_BUNDLES=${BENCH_CATALOG_BUNDLES:-0}
CATALOG_IMAGE_SIZE=${BENCH_CATALOG_IMAGE_SIZE:-$LAYER_SIZE}
if [ "$CATALOG_BUNDLES" -gt 0 ]; then
	case " $WHAT " in *" catalog "*) ;; *) WHAT="$WHAT catalog" ;; esac
fi
case " $WHAT " in *" catalog "*) [ "$CATALOG_BUNDLES" -gt 0 ] || CATALOG_BUNDLES=50 ;; esac
# the release is generated and pushed only for the release modes
release=0
case " $WHAT " in *" mirror "* | *" push "*) release=1 ;; esac

if [ ! -x "$AIRLOCK" ]; then
	echo "mirror_latency: AIRLOCK='$AIRLOCK' is not executable (build first or set AIRLOCK)" >&2
	exit 2
fi
for t in skopeo docker-registry; do
	command -v "$t" >/dev/null || { echo "mirror_latency: '$t' not found" >&2; exit 2; }
done

W=$(mktemp -d "${TMPDIR:-/tmp}/airlock-bench-latency.XXXXXX")
export HOME=$W/home XDG_RUNTIME_DIR=$W/run
unset REGISTRY_AUTH_FILE DOCKER_CONFIG
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
printf '{"default":[{"type":"insecureAcceptAnything"}]}\n' >"$W/policy.json"
SKOPEO=(skopeo --policy "$W/policy.json")

. "$AL_SOURCE_DIR/tests/tools/registry.sh"
. "$AL_SOURCE_DIR/tests/bench/lib.sh"
proxy_pid=
cleanup() {
	local rc=$?
	set +e
	[ -z "$proxy_pid" ] || kill "$proxy_pid" 2>/dev/null
	al_registry_stop
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $W" >&2; else rm -rf "$W"; fi
	exit $rc
}
trap cleanup EXIT
log() { echo "bench: $*" >&2; }

# layout_names LAYOUT [REGEX]: the ref names of LAYOUT's images (matching REGEX)
layout_names() {
	python3 -c '
import json, re, sys
for m in json.load(open(sys.argv[1] + "/index.json"))["manifests"]:
    n = m["annotations"]["org.opencontainers.image.ref.name"]
    if re.search(sys.argv[2], n):
        print(n)' "$1" "${2:-}"
}

al_registry_start "$W/reg" || exit 3
R=$AL_REGISTRY_ADDR
names=
if [ "$release" = 1 ]; then
	log "generating $COMPONENTS components x $LAYER_SIZE bytes + shared base $BASE_SIZE bytes"
	python3 "$AL_SOURCE_DIR/tests/tools/mkrelease.py" --out "$W/release" --components "$COMPONENTS" \
		--layer-size "$LAYER_SIZE" --base-size "$BASE_SIZE" --gzip-level 1 --seed "$SEED" >/dev/null
	total=$(du -sb "$W/release/blobs" | cut -f1)
	names=$(layout_names "$W/release")
	nimages=$(echo "$names" | wc -l)
	log "pushing $nimages images to $R with skopeo (no latency)"
	for n in $names; do
		"${SKOPEO[@]}" copy -q --dest-tls-verify=false "oci:$W/release:$n" "docker://$R/${n#*/}"
	done
fi
cnames=
case " $WHAT " in *" catalog "*)
	log "generating a catalog of $CATALOG_BUNDLES bundles (images of $CATALOG_IMAGE_SIZE bytes)"
	python3 "$AL_SOURCE_DIR/tests/tools/mkcatalog.py" "$W/catalog" quay.io/example/big-catalog:v1 \
		--bundles "$CATALOG_BUNDLES" --images --image-size "$CATALOG_IMAGE_SIZE" >/dev/null
	# what the mirror selects: the catalog and every image of package big
	cnames=$(layout_names "$W/catalog" '^quay\.io/example/big-')
	cimages=$(echo "$cnames" | wc -l)
	ctotal=$(python3 -c '
import json, sys
d = sys.argv[1]
seen = set()
for m in json.load(open(d + "/index.json"))["manifests"]:
    if not m["annotations"]["org.opencontainers.image.ref.name"].startswith("quay.io/example/big-"):
        continue
    man = json.load(open(d + "/blobs/sha256/" + m["digest"][7:]))
    for x in [m, man["config"]] + man["layers"]:
        seen.add((x["digest"], x["size"]))
print(sum(s for _, s in seen))' "$W/catalog")
	log "pushing $cimages images (the catalog and package big) to $R with skopeo (no latency)"
	for n in $cnames; do
		"${SKOPEO[@]}" copy -q --dest-tls-verify=false "oci:$W/catalog:$n" "docker://$R/${n#*/}"
	done
	;;
esac

python3 "$AL_SOURCE_DIR/tests/tools/tcpfault.py" --upstream "$R" --port-file "$W/proxy.port" \
	--latency-ms "$LATENCY_MS" &
proxy_pid=$!
for _ in $(seq 100); do [ -s "$W/proxy.port" ] && break; sleep 0.1; done
[ -s "$W/proxy.port" ] || { log "the latency proxy did not start"; exit 3; }
P=127.0.0.1:$(cat "$W/proxy.port")
log "latency proxy $P -> $R, $LATENCY_MS ms per request and per connection"

imageset() {
	cat <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-samples/release:4.14.1-x86_64
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: docker://$1/airlock-samples
YAML
}
imageset "$P" >"$W/imageset.yaml"
imageset "$R" >"$W/imageset-direct.yaml"
# the store push_pN pushes from, mirrored once without latency
case " $WHAT " in *" push "*)
	"$AIRLOCK" mirror -q --allow-unsigned --config "$W/imageset-direct.yaml" --store "$W/src-store" \
		--tls-verify=false ;;
esac
bench_catalog_imageset "docker://$P/example" >"$W/catalog.yaml"

# skopeo loop scripts: loop i copies every LOOPS-th image
mkdir -p "$W/loops"
i=0
for ((p = 0; p < LOOPS; p++)); do : >"$W/loops/mirror-$p.sh"; : >"$W/loops/push-$p.sh"; : >"$W/loops/catalog-$p.sh"; done
for n in $names; do
	p=$((i % LOOPS))
	printf '%q ' "${SKOPEO[@]}" copy -q --retry-times 3 --src-tls-verify=false "docker://$P/${n#*/}" >>"$W/loops/mirror-$p.sh"
	echo "\"oci:\$1:$n\" || exit 1" >>"$W/loops/mirror-$p.sh"
	printf '%q ' "${SKOPEO[@]}" copy -q --retry-times 3 --dest-tls-verify=false "oci:$W/release:$n" >>"$W/loops/push-$p.sh"
	echo "\"docker://$P/\$1/${n#*/}\" || exit 1" >>"$W/loops/push-$p.sh"
	i=$((i + 1))
done
i=0
for n in $cnames; do
	p=$((i % LOOPS))
	printf '%q ' "${SKOPEO[@]}" copy -q --retry-times 3 --src-tls-verify=false "docker://$P/${n#*/}" >>"$W/loops/catalog-$p.sh"
	echo "\"oci:\$1:$n\" || exit 1" >>"$W/loops/catalog-$p.sh"
	i=$((i + 1))
done

# a repository prefix never pushed to before, for each push run
fresh_prefix() {
	local n
	n=$(($(cat "$W/prefix.count" 2>/dev/null || echo 0) + 1))
	echo "$n" >"$W/prefix.count"
	echo "run$n" >"$W/prefix.$1"
}

modes=()
for N in $PARALLELS; do
	eval "prep_mirror_p$N() { rm -rf \"\$W/store-m\"; }"
	eval "run_mirror_p$N() { \"\$AIRLOCK\" mirror -q --allow-unsigned --config \"\$W/imageset.yaml\" \
		--store \"\$W/store-m\" --tls-verify=false --parallel $N; }"
	eval "prep_push_p$N() { fresh_prefix push_p$N; }"
	eval "run_push_p$N() { \"\$AIRLOCK\" push -q --store \"\$W/src-store\" --tls-verify=false \
		--parallel $N \"docker://\$P/\$(cat \"\$W/prefix.push_p$N\")\"; }"
	eval "prep_catalog_p$N() { rm -rf \"\$W/store-c\"; }"
	eval "run_catalog_p$N() { \"\$AIRLOCK\" mirror -q --config \"\$W/catalog.yaml\" \
		--store \"\$W/store-c\" --tls-verify=false --parallel $N; }"
done
prep_skopeo_mirror() { rm -rf "$W"/skopeo-m-*; }
# side_by_side KIND ARG: the LOOPS loop scripts of KIND at once; fails when one does
side_by_side() {
	local p pids=() rc=0
	for ((p = 0; p < LOOPS; p++)); do
		bash "$W/loops/$1-$p.sh" "$2${3:+-$p}" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	return $rc
}
run_skopeo_mirror() { side_by_side mirror "$W/skopeo-m" each; }
prep_skopeo_push() { fresh_prefix skopeo_push; }
run_skopeo_push() { side_by_side push "$(cat "$W/prefix.skopeo_push")" each; }
prep_skopeo_catalog() { rm -rf "$W"/skopeo-c-*; }
run_skopeo_catalog() { side_by_side catalog "$W/skopeo-c" each; }
for w in $WHAT; do
	for N in $PARALLELS; do modes+=("${w}_p$N"); done
	modes+=("skopeo_$w")
done

bench_init "$W/bench"
log "load before: $(bench_load); $ROUNDS rounds of: ${modes[*]}"
bench_rounds "$ROUNDS" "${modes[@]}"
case " $WHAT " in *" mirror "*)
	"$AIRLOCK" check --store "$W/store-m" >"$W/check.out" ||
		{ log "airlock check of the last mirror failed"; tail -n 5 "$W/check.out" >&2; exit 3; } ;;
esac
case " $WHAT " in *" catalog "*)
	"$AIRLOCK" check --store "$W/store-c" >"$W/check-c.out" ||
		{ log "airlock check of the last catalog mirror failed"; tail -n 5 "$W/check-c.out" >&2; exit 3; }
	# every bundle selected, every image of the catalog in the store
	python3 - "$W/store-c" "$CATALOG_BUNDLES" "$cimages" <<'PY' || { log "the last catalog mirror is incomplete"; exit 3; }
import json, sys
s, n, want = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cats = json.load(open(s + "/airlock/releases.json"))["catalogs"]
names = {m["digest"] for m in json.load(open(s + "/index.json"))["manifests"]}
assert len(cats) == 1 and cats[0]["bundles"] == n, [(c["name"], c["bundles"]) for c in cats]
assert len(cats[0]["images"]) + 1 == want, (len(cats[0]["images"]), want)
assert all(i.split("@")[1] in names for i in cats[0]["images"])
PY
	;;
esac

if [ "$release" = 1 ]; then
	echo "images: $nimages, blobs: $((total / 1024)) KiB, latency $LATENCY_MS ms per request and per connection, $LOOPS skopeo loops, $ROUNDS rounds, load $(bench_load)"
fi
case " $WHAT " in *" catalog "*)
	echo "catalog: $CATALOG_BUNDLES bundles, $cimages images (with the catalog), blobs: $((ctotal / 1024)) KiB, latency $LATENCY_MS ms per request and per connection, $LOOPS skopeo loops, $ROUNDS rounds, load $(bench_load)" ;;
esac
median() { python3 -c 'import statistics, sys; print("%.2f" % statistics.median(float(l.split()[0]) for l in open(sys.argv[1]) if l.strip()))' "$1"; }
for w in $WHAT; do
	label=$w
	[ "$w" != catalog ] || label="catalog mirror"
	for N in $PARALLELS; do
		bench_ratio "$label --parallel $N vs $LOOPS skopeo loops (median $(median "$W/bench/times/${w}_p$N") s)" "${w}_p$N" "skopeo_$w"
	done
	best=$(for N in $PARALLELS; do echo "$(median "$W/bench/times/${w}_p$N") $N"; done | sort -n | head -n 1)
	echo "$label: fastest --parallel ${best#* } (median ${best%% *} s); $LOOPS skopeo loops median $(median "$W/bench/times/skopeo_$w") s"
done

# lib.sh: sourced by the tests/bench scripts: interleaved timing rounds and ratio reports.
#
# A benchmark defines, for every mode M it measures, a function run_M (the
# timed command) and optionally prep_M (untimed: clear the last run's
# output). bench_rounds runs every mode once per round, in an order that
# rotates from round to round (A B C, B C A, ...), so that a slow spell of
# the shared machine falls on all modes alike. bench_ratio then prints, for
# a subject mode against a set of peer modes, the ratio subject / fastest
# peer (the peer with the lowest median), one ratio per round, as the median
# with its range. Absolute times go only to the detail log.
#
#   bench_init DIR            where times are kept (DIR/times/M: "secs rss_kib" lines)
#   bench_rounds N M...       N rounds over the modes M...
#   bench_ratio LABEL S P...  "LABEL: S / fastest of P... = median [min-max] over N rounds"
#   bench_rss M               the largest peak RSS of mode M, in MiB
#   bench_load                the load average, for the report header
#   bench_catalog_imageset L  an ImageSetConfiguration mirroring every bundle
#                             of mkcatalog.py's package big, quay.io/example
#                             read from location L (airlock.sources)
# Needs GNU time (/usr/bin/time, Debian package 'time') and python3.

bench_init() {
	BENCH_W=$1
	mkdir -p "$BENCH_W/times"
	rm -f "$BENCH_W"/times/*
	if [ ! -x /usr/bin/time ]; then
		echo "bench: installing GNU time (Debian package 'time')" >&2
		apt-get install -y -q time >/dev/null
	fi
}

bench_load() {
	cut -d' ' -f1-3 /proc/loadavg
}

bench__one() {
	local m=$1
	if declare -F "prep_$m" >/dev/null; then
		"prep_$m" >/dev/null 2>&1 || { echo "bench: prep_$m failed" >&2; exit 3; }
	fi
	sync
	if ! /usr/bin/time -f '%e %M' -o "$BENCH_W/times/$m.last" bash -c "$(declare -f "run_$m"); run_$m" \
		>"$BENCH_W/$m.out" 2>"$BENCH_W/$m.err"; then
		echo "bench: mode '$m' failed:" >&2
		tail -n 20 "$BENCH_W/$m.err" >&2
		exit 3
	fi
	tail -n 1 "$BENCH_W/times/$m.last" >>"$BENCH_W/times/$m"
	echo "bench:   $m $(tail -n 1 "$BENCH_W/times/$m.last" | awk '{printf "%.2f s, %d MiB", $1, $2 / 1024}')" >&2
}

bench_rounds() {
	local n=$1 r i k
	shift
	local modes=("$@")
	k=${#modes[@]}
	for ((r = 0; r < n; r++)); do
		echo "bench: round $((r + 1))/$n (load $(bench_load))" >&2
		for ((i = 0; i < k; i++)); do
			bench__one "${modes[$(((i + r) % k))]}"
		done
	done
}

bench_ratio() {
	local label=$1 subject=$2
	shift 2
	python3 - "$BENCH_W/times" "$label" "$subject" "$@" <<'PY'
import statistics, sys
d, label, subject, peers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def times(m):
    with open(f"{d}/{m}") as f:
        return [float(l.split()[0]) for l in f if l.strip()]
s = times(subject)
best = min(peers, key=lambda p: statistics.median(times(p)))
p = times(best)
n = min(len(s), len(p))
r = sorted(s[i] / p[i] for i in range(n) if p[i] > 0)
if not r:
    print(f"{label}: no rounds")
    sys.exit(0)
print(f"{label}: {subject} / {best} = {statistics.median(r):.2f} [{r[0]:.2f}-{r[-1]:.2f}] over {n} rounds"
      + (f" (fastest of: {', '.join(peers)})" if len(peers) > 1 else ""))
PY
}

bench_rss() {
	awk 'BEGIN {m = 0} {if ($2 > m) m = $2} END {printf "%.1f", m / 1024}' "$BENCH_W/times/$1"
}

bench_catalog_imageset() {
	cat <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
  - catalog: docker://quay.io/example/big-catalog:v1
    full: true
    packages:
    - name: big
airlock:
  sources:
  - prefix: quay.io/example
    location: "$1"
YAML
}

# bench_sign_every STORE REGISTRY EVERY DIR: a cosign ".sig" signature
# pushed to REGISTRY (tests/tools/cosign_push.py, one key made in DIR) for
# the release image of STORE's index and every EVERY-th other image; the
# count in $signed. rerun.sh and mirror_sigstore.sh seed their registry so.
bench_sign_every() {
	local store=$1 reg=$2 every=$3 dir=$4 name digest repo i=0
	openssl ecparam -name prime256v1 -genkey -noout -out "$dir/k.key" 2>/dev/null
	signed=0
	while read -r name digest; do
		repo=${name#quay.io/}
		repo=${repo%@*}
		repo=${repo%:*}
		case $name in *release:*) ;; *) i=$((i + 1)); [ $((i % every)) = 0 ] || continue ;; esac
		python3 "$AL_SOURCE_DIR/tests/tools/cosign_push.py" sig "$reg" "$repo" "$digest" "$dir/k.key" "quay.io/$repo" >/dev/null
		signed=$((signed + 1))
	done < <(python3 -c '
import json, sys
for m in json.load(open(sys.argv[1]))["manifests"]:
    print(m["annotations"]["org.opencontainers.image.ref.name"], m["digest"])' "$store/index.json")
}

# bench_release_imageset FILE REGISTRY: an ImageSetConfiguration of the
# sample release read from docker://REGISTRY/airlock-samples, into FILE.
bench_release_imageset() {
	cat >"$1" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    release: quay.io/airlock-samples/release:4.14.1-x86_64
airlock:
  sources:
  - prefix: quay.io/airlock-samples
    location: docker://$2/airlock-samples
YAML
}

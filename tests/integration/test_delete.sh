#!/usr/bin/env bash
# test_delete.sh: airlock delete on a store holding two releases that share blobs and two additional images: --dry-run, by version, by DeleteImageSetConfiguration, refusals and the --state guard.
# al-tier: quick
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
al_require_airlock
command -v python3 >/dev/null || al_skip "python3 is needed for mkrelease.py"

. "$(dirname "${BASH_SOURCE[0]}")/delete_lib.sh"

store=$T/store
if ! mkstore "$store"; then
	cat "$T/mirror.out"
	al_fail "the store with both releases is mirrored"
	al_finish
fi
al_check "the store holds the signature of the additional image ($x_sig)" \
	grep -qF "\"$x_sig\"" "$store/index.json"
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$store"
al_check "the store holds 4.14.1 and 4.14.2" \
	bash -c 'grep -q "4\.14\.1" "$1" && grep -q "4\.14\.2" "$1"' _ "$T/out"

# ---- --dry-run ----
before=$(store_sums "$store")
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" 4.14.1 --dry-run
cat "$T/out" "$T/err"
al_check "dry run exits 0" test "$AL_RC" = 0
al_check "dry run names the release with its digest" grep -qxF "would delete release 4.14.1 ($dig_a)" "$T/out"
al_check "dry run names the release image's name" grep -qxF "would delete name $rel_a" "$T/out"
al_check "dry run names the component only 4.14.1 uses" grep -qxF "would delete name $oauth" "$T/out"
al_check "dry run names nothing of 4.14.2 or the additional images" \
	test "$(grep -c '^would delete name ' "$T/out")" = 2
al_check "dry run: the bytes it would free ($want_blobs blobs, $want_bytes bytes)" \
	grep -qE "^would delete 1 releases, 2 names: would free $want_blobs blobs \\($want_bytes bytes, " "$T/out"
al_check "dry run changes no file of the store" test "$before" = "$(store_sums "$store")"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$store"
al_check "after the dry run: check exits 0" test "$AL_RC" = 0

# ---- refusals ----
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" 4.99.0
cat "$T/err"
al_check "an unknown release: exit 3" test "$AL_RC" = 3
al_check "an unknown release: the error names it, once" \
	test "$(grep -o "no release '4\.99\.0' in store '$store'" "$T/err" | wc -l)" = 1
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" 4.14.2 4.99.0
al_check "an unknown release among known ones: exit 3, nothing deleted" \
	bash -c '[ "$1" = 3 ] && [ "$2" = "$3" ]' _ "$AL_RC" "$before" "$(store_sums "$store")"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" --image "$extra/nothing:1"
al_check "an unknown image: exit 3, the error names it" \
	bash -c '[ "$1" = 3 ] && grep -q "no image .*nothing:1" "$2"' _ "$AL_RC" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store"
al_check "nothing named: usage error, exit 2" test "$AL_RC" = 2

cat >"$T/helm.yaml" <<'YAML'
kind: DeleteImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
delete:
  platform:
    release: 4.14.1
  helm:
    repositories:
    - name: x
      url: https://example.invalid/charts
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" -c "$T/helm.yaml" --dry-run
cat "$T/err"
al_check "delete.helm is read: a chart the store does not record is a warning, the release still named" \
	bash -c '[ "$1" = 0 ] && grep -qF "helm x: no chart recorded in the store matches" "$2" && grep -qxF "would delete release 4.14.1 ($3)" "$4"' _ "$AL_RC" "$T/err" "$dig_a" "$T/out"
cat >"$T/packages.yaml" <<'YAML'
kind: DeleteImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
delete:
  operators:
  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.14
    packages:
    - name: aws-load-balancer-operator
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" -c "$T/packages.yaml"
cat "$T/err"
al_check "delete.operators[].packages of a catalog the store does not record: exit 3, the catalog named" \
	bash -c '[ "$1" = 3 ] && grep -qF "no catalog '"'"'registry.redhat.io/redhat/redhat-operator-index:v4.14'"'"'" "$2"' _ "$AL_RC" "$T/err"
sed 's/^kind: .*/kind: ImageSetConfiguration/' "$T/packages.yaml" >"$T/mirror-kind.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" -c "$T/mirror-kind.yaml"
al_check "an ImageSetConfiguration is refused (exit 2, kind named)" \
	bash -c '[ "$1" = 2 ] && grep -qF "$2:1:7: kind must be DeleteImageSetConfiguration, not ImageSetConfiguration" "$3"' \
	_ "$AL_RC" "$T/mirror-kind.yaml" "$T/err"
printf 'kind: DeleteImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\ndelete:\n  platform:\n    releases: 4.14.1\n' >"$T/typo.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" -c "$T/typo.yaml"
al_check "an unknown field is refused (exit 2, file:line:column)" \
	bash -c '[ "$1" = 2 ] && grep -qF "$2:5:5: unknown field '"'"'releases'"'"' in delete.platform" "$3"' _ "$AL_RC" "$T/typo.yaml" "$T/err"
al_check "the refusals changed no file of the store" test "$before" = "$(store_sums "$store")"

# ---- the --state guard ----
# the cluster runs 4.14.1 (the newest Completed) and moves to 4.14.2
cat >"$T/state.json" <<JSON
{"state": "Updating",
 "desired": {"version": "4.14.2", "image": "$prefix/release@$dig_b", "digest": "$dig_b"},
 "history": [{"state": "Partial", "version": "4.14.2", "digest": "$dig_b"},
             {"state": "Completed", "version": "4.14.1", "digest": "$dig_a"}]}
JSON
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" --state "$T/state.json" 4.14.1
cat "$T/err"
al_check "--state: the release the cluster runs is refused (exit 3)" test "$AL_RC" = 3
al_check "--state: the refusal names the release, the file and --force" \
	grep -qF "release 4.14.1 ($dig_a) is current for the cluster record '$T/state.json'" "$T/err"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" --state "$T/state.json" --dry-run 4.14.2
al_check "--state: the desired release is refused too, even in a dry run" \
	bash -c '[ "$1" = 3 ] && grep -q "release 4\.14\.2 " "$2"' _ "$AL_RC" "$T/err"
al_check "--state refusals changed no file of the store" test "$before" = "$(store_sums "$store")"
# once the update completed, 4.14.1 is history
cat >"$T/state2.json" <<JSON
{"state": "Reconciling",
 "desired": {"version": "4.14.2", "image": "$prefix/release@$dig_b", "digest": "$dig_b"},
 "history": [{"state": "Completed", "version": "4.14.2", "digest": "$dig_b"},
             {"state": "Completed", "version": "4.14.1", "digest": "$dig_a"}]}
JSON
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" --state "$T/state2.json" --dry-run 4.14.1
al_check "--state: an older Completed release may go" test "$AL_RC" = 0
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" --state "$T/state.json" --force --dry-run 4.14.1
al_check "--state --force: deleted anyway, with a warning naming it" \
	bash -c '[ "$1" = 0 ] && grep -q "warning: .*4\.14\.1.*--force" "$2"' _ "$AL_RC" "$T/err"
printf '{"state": "Nonsense"}\n' >"$T/bad-state.json"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" --state "$T/bad-state.json" --dry-run 4.14.1
al_check "--state: an unreadable record refuses the delete and names the file" \
	bash -c '[ "$1" != 0 ] && grep -qF "$2" "$3"' _ "$AL_RC" "$T/bad-state.json" "$T/err"

# ---- delete by version ----
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" 4.14.1
cat "$T/out" "$T/err"
al_check "delete 4.14.1 exits 0" test "$AL_RC" = 0
al_check "delete: the summary counts what it freed ($want_blobs blobs, $want_bytes bytes)" \
	grep -qE "^deleted 1 releases, 2 names: freed $want_blobs blobs \\($want_bytes bytes, " "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$store"
al_check "airlock releases: 4.14.1 is gone, 4.14.2 stays" \
	bash -c '! grep -q "4\.14\.1" "$1" && grep -q "4\.14\.2" "$1"' _ "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$store"
cat "$T/out"
al_check "check --store after the delete exits 0" test "$AL_RC" = 0
al_check "check: 0 missing, 0 corrupt, 0 unreferenced" \
	grep -qE '^checked [0-9]+ images, [0-9]+ blobs: 0 missing, 0 corrupt, 0 unreferenced$' <(al_last_line "$T/out")
after=$(store_blobs "$store")
al_check "exactly the blobs only 4.14.1 used are gone" \
	test "$(comm -23 <(printf '%s\n' "$before" | sed -n 's|.* \./blobs/sha256/|sha256:|p' | sort) <(printf '%s\n' "$after"))" = "$(cat "$T/freed")"
al_check "every blob 4.14.2 and the additional images use stays" \
	test -z "$(comm -23 "$T/kept" <(printf '%s\n' "$after"))"
al_index_digests "$store" >"$T/names"
al_check "the index no longer names 4.14.1 or its own component" \
	bash -c 'test -s "$1" && ! grep -qF -e "$2 " -e "$3 " "$1"' _ "$T/names" "$rel_a" "$oauth"
al_check "the index still names the shared components" \
	test "$(al_index_digests "$store" | grep -c "$prefix/ocp-v4.0-art-dev@")" = 3
got=$("${SKOPEO[@]}" inspect --format '{{.Digest}}' "oci:$store:$rel_b" 2>/dev/null || true)
al_check "skopeo still reads 4.14.2 from the store" test "$got" = "$dig_b"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" 4.14.1
al_check "deleting it again: exit 3, not found" \
	bash -c '[ "$1" = 3 ] && grep -q "no release .4\.14\.1." "$2"' _ "$AL_RC" "$T/err"

# ---- DeleteImageSetConfiguration: the other release and one additional image ----
cat >"$T/delete.yaml" <<YAML
kind: DeleteImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
delete:
  platform:
    release: $rel_b
  additionalImages:
  - name: $x_tag
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store" -c "$T/delete.yaml"
cat "$T/out" "$T/err"
al_check "delete -c DELETE.yaml exits 0" test "$AL_RC" = 0
al_check "-c: 4.14.2 deleted" grep -qxF "deleted release 4.14.2 ($dig_b)" "$T/out"
al_check "-c: the additional image deleted" grep -qxF "deleted name $x_tag" "$T/out"
al_check "-c: its cosign signature (tag scheme) went with it" grep -qxF "deleted name $x_sig" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$store"
al_check "-c: no release left" bash -c '! grep -q "4\.14\." "$1"' _ "$T/out"
al_check "-c: only the additional image by digest is still named" \
	test "$(al_index_digests "$store" | cut -d' ' -f1)" = "$x_comp"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$store"
al_check "-c: check --store exits 0, nothing unreferenced" \
	bash -c '[ "$1" = 0 ] && grep -qE "0 missing, 0 corrupt, 0 unreferenced$" "$2"' _ "$AL_RC" "$T/out"
al_check "-c: the store holds exactly the blobs of the image left" \
	test "$(store_blobs "$store")" = "$(reach "$T/src" "$x_comp" | sort)"

# a release by version in the configuration, and an image by digest
store2=$T/store2
if mkstore "$store2"; then
	cat >"$T/delete2.yaml" <<YAML
kind: DeleteImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
delete:
  platform:
    release: 4.14.1
  additionalImages:
  - name: ${x_comp#*@}
YAML
	al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$store2" -c "$T/delete2.yaml" --dry-run
	cat "$T/out" "$T/err"
	al_check "-c: a release by version, an image by digest (dry run exits 0)" \
		bash -c '[ "$1" = 0 ] && grep -qxF "would delete release 4.14.1 ($2)" "$3" && grep -qxF "would delete name $4" "$3"' \
		_ "$AL_RC" "$dig_a" "$T/out" "$x_comp"
else
	cat "$T/mirror.out"
	al_fail "the second store is mirrored"
fi

# ---- the bundled samples: a release with a stored signature ----
ss=$T/samples-store
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --config "$AL_SOURCE_DIR/samples/imageset.yaml" --store "$ss"
al_check "samples: mirrored (exit 0) with the release's signature" \
	bash -c '[ "$1" = 0 ] && ls "$2"/signatures/sha256=*/signature-1 >/dev/null' _ "$AL_RC" "$ss"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$ss" quay.io/airlock-samples/release:4.14.1-x86_64 --dry-run
al_check "samples: a release named by its image reference is not a version (exit 3)" test "$AL_RC" = 3
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$ss" --image quay.io/airlock-samples/release:4.14.1-x86_64 --dry-run
al_check "samples: --image naming the release image deletes the release, not just its name" \
	bash -c '[ "$1" = 0 ] && grep -q "^would delete release 4\.14\.1 " "$2" && grep -q "^would delete 1 releases, 7 names: would free 22 blobs" "$2"' _ "$AL_RC" "$T/out"
read -r sb sbytes < <(store_blobs "$ss" | count_bytes "$ss")
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$ss" 4.14.1
cat "$T/out" "$T/err"
al_check "samples: delete 4.14.1 frees every blob ($sb blobs, $sbytes bytes)" \
	bash -c '[ "$1" = 0 ] && grep -qE "^deleted 1 releases, 7 names: freed $2 blobs \\($3 bytes, " "$4"' _ "$AL_RC" "$sb" "$sbytes" "$T/out"
al_check "samples: the signature went with the release" bash -c '! ls "$1"/signatures/sha256=* >/dev/null 2>&1' _ "$ss"
al_check "samples: the store is empty" \
	bash -c '[ -z "$(ls "$1/blobs/sha256")" ] && [ "$2" = "[]" ]' _ "$ss" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"])' "$ss/index.json")"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$ss"
al_check "samples: the empty store checks clean" test "$AL_RC" = 0

# ---- channels: the releases recorded as mirrored from a channel, in range ----
cat >"$T/graph.json" <<JSON
{"nodes": [
  {"version": "4.14.1", "payload": "$prefix/release@$dig_a", "metadata": {}},
  {"version": "4.14.2", "payload": "$prefix/release@$dig_b", "metadata": {}}],
 "edges": [[0, 1]], "conditionalEdges": []}
JSON
cat >"$T/is-ch.yaml" <<YAML
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    channels:
    - name: stable-4.14
      minVersion: 4.14.1
      maxVersion: 4.14.2
airlock:
  sources:
  - prefix: $prefix
    location: oci:$T/src
YAML
s3=$T/store3
al_run "$T/out" "$T/err" "$AIRLOCK" mirror --allow-unsigned -c "$T/is-ch.yaml" --graph-file "$T/graph.json" --store "$s3"
al_run "$T/out2" "$T/err2" "$AIRLOCK" releases --store "$s3"
al_check "channels: both releases mirrored from stable-4.14" \
	bash -c '[ "$1" = 0 ] && [ "$(grep -c "stable-4\.14$" "$2")" = 2 ]' _ "$AL_RC" "$T/out2"
cat >"$T/del-ch.yaml" <<YAML
kind: DeleteImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
delete:
  platform:
    channels:
    - name: stable-4.14
      minVersion: 4.14.2
YAML
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$s3" -c "$T/del-ch.yaml"
cat "$T/out" "$T/err"
al_check "channels: minVersion 4.14.2 deletes 4.14.2 only" \
	bash -c '[ "$1" = 0 ] && grep -qxF "deleted release 4.14.2 ($2)" "$3" && [ "$(grep -c "^deleted release" "$3")" = 1 ]' \
	_ "$AL_RC" "$dig_b" "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" releases --store "$s3"
al_check "channels: 4.14.1 stays" bash -c 'grep -q "^4\.14\.1 " "$1" && ! grep -q "^4\.14\.2 " "$1"' _ "$T/out"
al_run "$T/out" "$T/err" "$AIRLOCK" check --store "$s3"
al_check "channels: check --store clean" test "$AL_RC" = 0
sed -i 's/minVersion: 4.14.2/minVersion: 4.15.0/' "$T/del-ch.yaml"
al_run "$T/out" "$T/err" "$AIRLOCK" delete --store "$s3" -c "$T/del-ch.yaml"
cat "$T/err"
al_check "channels: a range with no recorded release warns and deletes nothing (exit 3)" \
	bash -c '[ "$1" = 3 ] && grep -q "channel stable-4.14: no release recorded in the store is in range" "$2" && grep -q "nothing in store .* matches" "$2"' \
	_ "$AL_RC" "$T/err"

# ---- the documentation names every option --help gives, and no other ----
doc=$AL_SOURCE_DIR/docs/commands/delete.md
"$AIRLOCK" delete --help >"$T/help"
grep -oE '^ +(-[a-z], )?--[a-z-]+' "$T/help" | grep -oE -- '--[a-z-]+' | sort -u >"$T/help-opts"
sed -n '/^## Options/,/^## /p' "$doc" | grep -oE '^\| `(-[a-z]`, `)?--[a-z-]+' | grep -oE -- '--[a-z-]+' | sort -u >"$T/doc-opts"
al_check "docs/commands/delete.md lists the options of 'airlock delete --help' ($(wc -l <"$T/help-opts"))" \
	diff "$T/help-opts" "$T/doc-opts"
al_check "--help and the doc give the same summary line" \
	bash -c 'grep -qF "deleted R releases, N names: freed B blobs (X bytes, SIZE)" "$1" && grep -qF "deleted R releases, N names: freed B blobs (X bytes, SIZE)" "$2"' _ "$T/help" "$doc"

al_finish

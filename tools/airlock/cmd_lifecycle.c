/* cmd_lifecycle.c: airlock mirror --dry-run and --no-space-check: options
 * and the plan summary. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_json.h"
#include "cmd_lifecycle.h"

const char cli_mirror_lifecycle_help[] =
    "\nPlan (docs/lifecycle.md):\n"
    "      --dry-run[=DIR]      resolve everything (the release and catalog "
    "images are\n"
    "                           fetched to be read, Helm charts read; other "
    "images:\n"
    "                           manifests only), write DIR/mapping.txt "
    "(SOURCE=DEST) and\n"
    "                           DIR/missing.txt (default DIR: "
    "STORE/airlock/dry-run),\n"
    "                           print the bytes to transfer and the free "
    "space\n"
    "      --no-space-check     do not refuse a run whose missing bytes "
    "exceed the\n"
    "                           free space of the store's file system\n";

int cli_mirror_lifecycle_option(al_mirror_lifecycle *lc, int opt,
                                const char *arg)
{
	switch (opt) {
	case CLI_OPT_DRY_RUN:
		lc->dry_run = 1;
		lc->dry_run_dir = arg != NULL && arg[0] != '\0' ? arg : NULL;
		return 1;
	case CLI_OPT_NO_SPACE_CHECK:
		lc->no_space_check = 1;
		return 1;
	default:
		return 0;
	}
}

/* The plan as the "dry_run" member of the --json document (docs/json.md). */
static void dry_run_json(const al_mirror_lifecycle *lc,
                         const al_plan_totals *tot)
{
	json_t *o = cli_json_set_object(cli_json_root(), "dry_run"), *arr;
	char *mapping, *missing;
	size_t i, n;

	if (o == NULL)
		return;
	mapping = al_sprintf("%s/mapping.txt", lc->dir);
	missing = al_sprintf("%s/missing.txt", lc->dir);
	cli_json_set_str(o, "dir", lc->dir);
	cli_json_set_str(o, "mapping", mapping);
	cli_json_set_str(o, "missing", missing);
	free(mapping);
	free(missing);
	cli_json_set_u64(o, "images", tot->images);
	cli_json_set_u64(o, "images_missing", tot->images_missing);
	cli_json_set_u64(o, "images_failed", tot->images_failed);
	cli_json_set_u64(o, "blobs", tot->blobs);
	cli_json_set_u64(o, "bytes", tot->bytes);
	cli_json_set_u64(o, "blobs_missing", tot->blobs_missing);
	cli_json_set_u64(o, "bytes_missing", tot->bytes_missing);
	cli_json_set_u64(o, "prefetched_bytes", lc->prefetched);
	cli_json_set_u64(o, "free_bytes", lc->free);
	cli_json_set_u64(o, "needed_bytes", lc->need);
	cli_json_set_bool(o, "fits", lc->need <= lc->free);
	cli_json_set_u64(o, "signatures_missing", lc->signatures_missing);
	if ((arr = cli_json_set_array(o, "entries")) == NULL)
		return;
	n = al_plan_count(lc->plan);
	for (i = 0; i < n; i++) {
		const al_plan_entry *e = al_plan_entry_at(lc->plan, i);
		json_t *x = cli_json_append_object(arr);

		if (x == NULL)
			return;
		cli_json_set_str(x, "kind", e->kind);
		cli_json_set_str(x, "source", e->source);
		cli_json_set_str(x, "destination", e->destination);
		cli_json_set_u64(x, "size", e->size);
		cli_json_set_u64(x, "missing_bytes", e->missing);
		cli_json_set_bool(x, "present", e->present && e->status == 0);
		cli_json_set_str(x, "error", e->status < 0 ? e->message : NULL);
	}
}

int cli_mirror_dry_run_report(const cli_common *c,
                              const al_mirror_lifecycle *lc)
{
	al_plan_totals tot;
	char b1[32], b2[32], b3[32];
	size_t i, n;
	int code = EXIT_OK;

	al_plan_get_totals(lc->plan, &tot);
	n = al_plan_count(lc->plan);
	for (i = 0; i < n; i++) {
		const al_plan_entry *e = al_plan_entry_at(lc->plan, i);
		if (e->status < 0) {
			cli_error("%s", e->message);
			code = cli_worst(code, cli_exit_code(e->status));
		}
	}
	if (cli_json_active()) {
		dry_run_json(lc, &tot);
		goto fit;
	}
	printf("plan: %zu images (%zu not in the store, %zu failed), %llu "
	       "blobs, %llu bytes\n",
	       tot.images, tot.images_missing, tot.images_failed,
	       (unsigned long long)tot.blobs, (unsigned long long)tot.bytes);
	printf("to transfer: %llu blobs, %llu bytes (%s); already fetched "
	       "by the plan: %llu bytes (release and catalog images, oci:// "
	       "charts)\n",
	       (unsigned long long)tot.blobs_missing,
	       (unsigned long long)tot.bytes_missing,
	       cli_bytes(tot.bytes_missing, b1, sizeof(b1)),
	       (unsigned long long)lc->prefetched);
	printf(
	    "free space on the store's file system: %llu bytes (%s); "
	    "still needed: %llu bytes (%s)\n",
	    (unsigned long long)lc->free, cli_bytes(lc->free, b2, sizeof(b2)),
	    (unsigned long long)lc->need, cli_bytes(lc->need, b3, sizeof(b3)));
	if (lc->signatures_missing > 0)
		printf("signatures: %zu releases have none in the store yet "
		       "(fetched by the run)\n",
		       lc->signatures_missing);
	printf("mapping: %s/mapping.txt\nmissing: %s/missing.txt\n", lc->dir,
	       lc->dir);
fit:
	if (lc->need > lc->free) {
		cli_error("the selection does not fit: %llu bytes needed, %llu "
		          "bytes free; a run would be refused (unless "
		          "--no-space-check)",
		          (unsigned long long)lc->need,
		          (unsigned long long)lc->free);
		code = cli_worst(code, EXIT_RUNTIME);
	}
	(void)c;
	return code;
}

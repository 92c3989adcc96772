/* cmd_lifecycle.c: airlock mirror --dry-run and --no-space-check: options
 * and the plan summary. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_lifecycle.h"

const char cli_mirror_lifecycle_help[] =
    "\nPlan (docs/lifecycle.md):\n"
    "      --dry-run[=DIR]      resolve everything (the release images are "
    "fetched to\n"
    "                           read their image-references; other images: "
    "manifests\n"
    "                           only), write DIR/mapping.txt (SOURCE=DEST) "
    "and\n"
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
	printf("plan: %zu images (%zu not in the store, %zu failed), %llu "
	       "blobs, %llu bytes\n",
	       tot.images, tot.images_missing, tot.images_failed,
	       (unsigned long long)tot.blobs, (unsigned long long)tot.bytes);
	printf("to transfer: %llu blobs, %llu bytes (%s); already fetched "
	       "by the plan: %llu bytes of release images\n",
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

/* test_update.c: unit tests for the updater: manifest names, graph grouping and order, profiles, image substitution, the state machine, messages, dry runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "al_test.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/imageset.h"
#include "airlock/json.h"
#include "airlock/mirror.h"
#include "airlock/update.h"

#define INC "    include.release.openshift.io/self-managed-high-availability: \"true\"\n"

static char *doc(const char *kind, const char *name, const char *extra)
{
	return al_sprintf("apiVersion: v1\nkind: %s\nmetadata:\n  name: %s\n  annotations:\n" INC "%s", kind, name,
			  extra != NULL ? extra : "");
}

static al_update_file file_of(const char *name, const char *text)
{
	al_update_file f;

	f.name = name;
	f.data = (const uint8_t *)text;
	f.len = strlen(text);
	return f;
}

static const al_update_image test_images[] = {
	{"etcd", "quay.io/x/ocp@sha256:1111111111111111111111111111111111111111111111111111111111111111"},
	{"cli", "quay.io/x/ocp@sha256:2222222222222222222222222222222222222222222222222222222222222222"},
};

static al_update_load_opts opts_default(void)
{
	al_update_load_opts o;

	memset(&o, 0, sizeof(o));
	o.version = "4.14.2";
	o.images = test_images;
	o.nimages = 2;
	return o;
}

static void test_update__parse_name_numbered(void)
{
	int numbered = -1;
	unsigned level = 99;
	char *comp = NULL;

	CU_ASSERT_EQUAL(al_update_parse_name("0000_10_etcd-operator_00_namespace.yaml", &numbered, &level, &comp), 0);
	CU_ASSERT_EQUAL(numbered, 1);
	CU_ASSERT_EQUAL(level, 10);
	CU_ASSERT_PTR_NOT_NULL(comp);
	if (comp != NULL)
		CU_ASSERT_STRING_EQUAL(comp, "etcd-operator");
	free(comp);
	comp = NULL;
	CU_ASSERT_EQUAL(al_update_parse_name("0000_5_a_b", &numbered, &level, &comp), 0);
	CU_ASSERT_EQUAL(numbered, 1);
	CU_ASSERT_EQUAL(level, 5);
	if (comp != NULL)
		CU_ASSERT_STRING_EQUAL(comp, "a");
	free(comp);
	comp = NULL;
	/* the component ends at the first '_': the rest is the manifest name */
	CU_ASSERT_EQUAL(al_update_parse_name("0000_90_x_y_z.yaml", &numbered, &level, &comp), 0);
	CU_ASSERT_EQUAL(level, 90);
	if (comp != NULL)
		CU_ASSERT_STRING_EQUAL(comp, "x");
	free(comp);
}

static void test_update__parse_name_unnumbered_and_weird(void)
{
	static const char *const names[] = {
		"namespace.yaml",          /* no prefix */
		"0001_10_a_b.yaml",        /* not 0000_ */
		"0000_ab_x_y.yaml",        /* non-digit level */
		"0000__x_y.yaml",          /* empty level */
		"0000_10__y.yaml",         /* empty component */
		"0000_10_etcd.yaml",       /* no '_' after the component */
		"0000_10_etcd.op_x.yaml",  /* '.' ends the component without '_' */
		"0000_1234567890_a_b",     /* level longer than 9 digits */
		"0000_10",                 /* truncated */
		"",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int numbered = -1;
		unsigned level = 99;
		char *comp = (char *)1;

		CU_ASSERT_EQUAL(al_update_parse_name(names[i], &numbered, &level, &comp), 0);
		CU_ASSERT_EQUAL(numbered, 0);
		CU_ASSERT_EQUAL(level, 0);
		CU_ASSERT_PTR_NULL(comp);
		if (numbered != 0)
			printf("wrongly numbered: '%s'\n", names[i]);
	}
	CU_ASSERT_EQUAL(al_update_parse_name(NULL, NULL, NULL, NULL), AL_EINVAL);
}

static void test_update__graph_levels_components_and_order(void)
{
	char *d[9];
	al_update_file f[11];
	al_update_graph *g = NULL;
	al_update_load_opts o = opts_default();
	char *two;
	size_t i;

	d[0] = doc("ConfigMap", "b20", NULL);
	d[1] = doc("ConfigMap", "a10-1", NULL);
	d[2] = doc("ConfigMap", "a10-0", NULL);
	d[3] = doc("ConfigMap", "c10", NULL);
	d[4] = doc("ConfigMap", "b10", NULL);
	d[5] = doc("ConfigMap", "unnumbered", NULL);
	d[6] = doc("ConfigMap", "x05-a", NULL);
	d[7] = doc("ConfigMap", "x05-b", NULL);
	d[8] = doc("ConfigMap", "a10-2", NULL);
	two = al_sprintf("%s---\n%s", d[6], d[7]);
	/* given out of order on purpose */
	f[0] = file_of("0000_20_b_00_x.yaml", d[0]);
	f[1] = file_of("0000_10_a_01_x.yaml", d[1]);
	f[2] = file_of("0000_10_a_00_x.yaml", d[2]);
	f[3] = file_of("0000_10_c_00_x.yaml", d[3]);
	f[4] = file_of("0000_10_b_00_x.yaml", d[4]);
	f[5] = file_of("zz-unnumbered.yaml", d[5]);
	f[6] = file_of("0000_05_x_00_two.yaml", two);
	f[7] = file_of("0000_10_a_02_x.json", d[8]); /* YAML parses; .json counts */
	f[8] = file_of("image-references", "{\"kind\":\"ImageStream\"}");
	f[9] = file_of("README.md", "not a manifest");
	f[10] = file_of("0000_10_b_00_x.yaml.orig", "::: not yaml");
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, 11, &o), 0);
	CU_ASSERT_PTR_NOT_NULL(g);
	if (g != NULL) {
		static const char *const want[] = {"x05-a", "x05-b", "a10-0", "a10-1", "a10-2", "b10", "c10", "b20", "unnumbered"};

		CU_ASSERT_EQUAL(g->ntasks, 9);
		for (i = 0; i < g->ntasks && i < 9; i++)
			CU_ASSERT_STRING_EQUAL(g->tasks[i].name, want[i]);
		CU_ASSERT_EQUAL(g->nlevels, 4);
		CU_ASSERT_EQUAL(g->levels[0].level, 5);
		CU_ASSERT_EQUAL(g->levels[1].level, 10);
		CU_ASSERT_EQUAL(g->levels[2].level, 20);
		CU_ASSERT_EQUAL(g->levels[3].numbered, 0);
		CU_ASSERT_EQUAL(g->levels[1].count, 3);
		CU_ASSERT_EQUAL(g->levels[1].ntasks, 5);
		CU_ASSERT_EQUAL(g->ncomponents, 6);
		CU_ASSERT_STRING_EQUAL(g->components[g->levels[1].first].name, "a");
		CU_ASSERT_EQUAL(g->components[g->levels[1].first].count, 3);
		CU_ASSERT_STRING_EQUAL(g->components[g->levels[1].first + 1].name, "b");
		CU_ASSERT_STRING_EQUAL(g->components[g->levels[1].first + 2].name, "c");
		CU_ASSERT_STRING_EQUAL(g->components[g->levels[3].first].name, "");
		/* the second document of a file keeps its index */
		CU_ASSERT_EQUAL(g->tasks[1].doc, 1);
		CU_ASSERT_STRING_EQUAL(g->tasks[1].file, "0000_05_x_00_two.yaml");
	}
	al_update_graph_free(g);
	for (i = 0; i < 9; i++)
		free(d[i]);
	free(two);
}

static void test_update__profiles_exclude_and_delete(void)
{
	const char *text =
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ha\n  annotations:\n" INC
		"---\n"
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sno\n  annotations:\n"
		"    include.release.openshift.io/single-node-developer: \"true\"\n"
		"---\n"
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: none\n"
		"---\n"
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: quoted-false\n  annotations:\n"
		"    include.release.openshift.io/self-managed-high-availability: \"false\"\n"
		"---\n"
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hosted-excluded\n  annotations:\n" INC
		"    exclude.release.openshift.io/internal-openshift-hosted: \"true\"\n"
		"---\n"
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deleted\n  annotations:\n" INC
		"    release.openshift.io/delete: \"true\"\n"
		"---\n";
	al_update_file f = file_of("0000_50_x_00.yaml", text);
	al_update_load_opts o = opts_default();
	al_update_graph *g = NULL;

	CU_ASSERT_EQUAL(al_update_graph_build(&g, &f, 1, &o), 0);
	if (g != NULL) {
		CU_ASSERT_EQUAL(g->ntasks, 3);
		CU_ASSERT_STRING_EQUAL(g->tasks[0].name, "ha");
		CU_ASSERT_STRING_EQUAL(g->tasks[1].name, "hosted-excluded");
		/* a deletion stays in the graph, as a deletion */
		CU_ASSERT_STRING_EQUAL(g->tasks[2].name, "deleted");
		CU_ASSERT_EQUAL(g->tasks[0].delete_it, 0);
		CU_ASSERT_EQUAL(g->tasks[2].delete_it, 1);
		CU_ASSERT_EQUAL(g->skipped, 3);
	}
	al_update_graph_free(g);
	g = NULL;
	o.exclude = "internal-openshift-hosted";
	CU_ASSERT_EQUAL(al_update_graph_build(&g, &f, 1, &o), 0);
	if (g != NULL) {
		CU_ASSERT_EQUAL(g->ntasks, 2);
		CU_ASSERT_STRING_EQUAL(g->tasks[0].name, "ha");
		CU_ASSERT_STRING_EQUAL(g->tasks[1].name, "deleted");
	}
	al_update_graph_free(g);
	g = NULL;
	o.exclude = NULL;
	o.profile = "single-node-developer";
	CU_ASSERT_EQUAL(al_update_graph_build(&g, &f, 1, &o), 0);
	if (g != NULL) {
		CU_ASSERT_EQUAL(g->ntasks, 1);
		CU_ASSERT_STRING_EQUAL(g->tasks[0].name, "sno");
	}
	al_update_graph_free(g);
	g = NULL;
	o.profile = "ibm-cloud-managed";
	CU_ASSERT_EQUAL(al_update_graph_build(&g, &f, 1, &o), AL_EPARSE);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "ibm-cloud-managed"));
}

static void test_update__image_and_version_substitution(void)
{
	const char *text =
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: ns\n  annotations:\n" INC
		"spec:\n  template:\n    spec:\n      containers:\n"
		"      - image: registry.ci.openshift.org/openshift:etcd\n"
		"        args: [\"--cli=registry.ci.openshift.org/openshift:cli,--x\"]\n"
		"        env:\n        - name: V\n          value: \"0.0.1-snapshot\"\n"
		"      - image: quay.io/other/full@sha256:3333333333333333333333333333333333333333333333333333333333333333\n"
		"      - image: registry.ci.openshift.org/openshift:etcd-extra\n";
	const char *good = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n" INC
			   "data:\n  img: registry.ci.openshift.org/openshift:cli\n";
	al_update_file f = file_of("0000_10_x_00.yaml", text), f2 = file_of("0000_10_x_01.yaml", good);
	al_update_load_opts o = opts_default();
	al_update_graph *g = NULL;
	json_t *c;

	/* etcd-extra is not in image-references: the whole payload is refused */
	CU_ASSERT_EQUAL(al_update_graph_build(&g, &f, 1, &o), AL_EPARSE);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "0000_10_x_00.yaml"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "etcd-extra"));
	CU_ASSERT_EQUAL(al_update_graph_build(&g, &f2, 1, &o), 0);
	if (g != NULL)
		CU_ASSERT_STRING_EQUAL(al_json_str(json_object_get(g->tasks[0].obj, "data"), "img"), test_images[1].image);
	al_update_graph_free(g);
	g = NULL;
	/* with the extra tag known, everything is substituted */
	{
		al_update_image imgs[3];
		al_update_load_opts o2 = o;

		memcpy(imgs, test_images, sizeof(test_images));
		imgs[2].tag = "etcd-extra";
		imgs[2].image = "quay.io/x/extra@sha256:4444444444444444444444444444444444444444444444444444444444444444";
		o2.images = imgs;
		o2.nimages = 3;
		CU_ASSERT_EQUAL(al_update_graph_build(&g, &f, 1, &o2), 0);
		if (g == NULL)
			return;
		c = json_object_get(json_object_get(json_object_get(json_object_get(g->tasks[0].obj, "spec"), "template"), "spec"),
				    "containers");
		CU_ASSERT_STRING_EQUAL(al_json_str(json_array_get(c, 0), "image"), test_images[0].image);
		{
			char *want = al_sprintf("--cli=%s,--x", test_images[1].image);

			CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(json_object_get(json_array_get(c, 0), "args"), 0)),
					       want);
			free(want);
		}
		CU_ASSERT_STRING_EQUAL(al_json_str(json_array_get(json_object_get(json_array_get(c, 0), "env"), 0), "value"),
				       "4.14.2");
		/* full references are left alone */
		CU_ASSERT_STRING_EQUAL(al_json_str(json_array_get(c, 1), "image"),
				       "quay.io/other/full@sha256:3333333333333333333333333333333333333333333333333333333333333333");
		CU_ASSERT_STRING_EQUAL(al_json_str(json_array_get(c, 2), "image"), imgs[2].image);
		CU_ASSERT_STRING_EQUAL(g->tasks[0].ns, "ns");
		al_update_graph_free(g);
	}
}

static void test_update__flags_and_bad_documents(void)
{
	const char *co = "apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: etcd\n  annotations:\n" INC
			 "    release.openshift.io/create-only: \"true\"\n"
			 "status:\n  versions:\n  - name: operator\n    version: \"0.0.1-snapshot\"\n---\n---\n";
	const char *nokind = "apiVersion: v1\nmetadata:\n  name: x\n  annotations:\n" INC;
	const char *scalar = "just a string\n";
	al_update_file f = file_of("0000_10_etcd_07_co.yaml", co);
	al_update_load_opts o = opts_default();
	al_update_graph *g = NULL;

	CU_ASSERT_EQUAL(al_update_graph_build(&g, &f, 1, &o), 0);
	if (g != NULL) {
		CU_ASSERT_EQUAL(g->ntasks, 1); /* empty documents skipped */
		CU_ASSERT_EQUAL(g->tasks[0].cluster_operator, 1);
		CU_ASSERT_EQUAL(g->tasks[0].create_only, 1);
		CU_ASSERT_PTR_NULL(g->tasks[0].ns);
		CU_ASSERT_STRING_EQUAL(al_json_str(json_array_get(json_object_get(json_object_get(g->tasks[0].obj, "status"),
										  "versions"), 0), "version"), "4.14.2");
	}
	al_update_graph_free(g);
	g = NULL;
	/* a deletion: kept as a task, never an operator gate */
	{
		const char *del = "apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: old\n"
				  "  annotations:\n" INC "    release.openshift.io/delete: \"true\"\n";
		f = file_of("0000_10_etcd_08_delete.yaml", del);
		CU_ASSERT_EQUAL(al_update_graph_build(&g, &f, 1, &o), 0);
		if (g != NULL) {
			char *d = al_update_task_describe(&g->tasks[0]);
			CU_ASSERT_EQUAL(g->ntasks, 1);
			CU_ASSERT_EQUAL(g->tasks[0].delete_it, 1);
			CU_ASSERT_EQUAL(g->tasks[0].cluster_operator, 0);
			CU_ASSERT_STRING_EQUAL(d, "delete ClusterOperator old (0000_10_etcd_08_delete.yaml #1)");
			free(d);
		}
		al_update_graph_free(g);
		g = NULL;
	}
	f = file_of("0000_10_x_00_bad.yaml", nokind);
	CU_ASSERT_EQUAL(al_update_graph_build(&g, &f, 1, &o), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "0000_10_x_00_bad.yaml"));
	f = file_of("0000_10_x_00_scalar.yaml", scalar);
	CU_ASSERT_EQUAL(al_update_graph_build(&g, &f, 1, &o), AL_EPARSE);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT_EQUAL(al_update_graph_build(&g, NULL, 0, &o), AL_EPARSE);
}

/* Every combination: the modes follow the table in docs/updater.md. */
static void test_update__choose_mode_table(void)
{
	int s, same, comp;

	for (s = AL_UPDATE_INITIALIZING; s <= AL_UPDATE_RECONCILING; s++)
		for (same = 0; same <= 1; same++)
			for (comp = 0; comp <= 1; comp++) {
				al_update_mode m = al_update_choose_mode((al_update_state)s, same, comp);

				al_update_mode want;

				if (!same || s == AL_UPDATE_INITIALIZING)
					want = AL_UPDATE_MODE_NEW;
				else if (s == AL_UPDATE_UPDATING)
					want = AL_UPDATE_MODE_RESUME;
				else
					want = comp ? AL_UPDATE_MODE_RECONCILE : AL_UPDATE_MODE_RESUME;
				CU_ASSERT_EQUAL(m, want);
			}
}

static void test_update__outcome_only_applied_when_everything_applied(void)
{
	static const int rcs[] = {0, AL_ETIMEOUT, AL_ECANCELED, AL_EPROTO, AL_ENET};
	size_t i, applied, total;

	for (i = 0; i < sizeof(rcs) / sizeof(rcs[0]); i++)
		for (total = 0; total <= 4; total++)
			for (applied = 0; applied <= 5; applied++) {
				al_update_outcome oc = al_update_outcome_of(rcs[i], applied, total);
				int want = rcs[i] == 0 && total > 0 && applied == total;

				CU_ASSERT_EQUAL(oc, want ? AL_UPDATE_OUTCOME_APPLIED : AL_UPDATE_OUTCOME_FAILED);
			}
	/* the incident: cancelled at 0 of 573 */
	CU_ASSERT_EQUAL(al_update_outcome_of(AL_ECANCELED, 0, 573), AL_UPDATE_OUTCOME_FAILED);
	CU_ASSERT_EQUAL(al_update_outcome_of(0, 0, 573), AL_UPDATE_OUTCOME_FAILED);
	CU_ASSERT_EQUAL(al_update_outcome_of(0, 0, 0), AL_UPDATE_OUTCOME_FAILED);
}

/*
 * The whole machine, exhaustively: from every persisted state, target
 * relation and outcome, Reconciling and Completed are reached only by
 * applying everything, or by staying in a reconcile of a Completed release.
 */
static void test_update__transitions_exhaustive(void)
{
	int s, same, comp, oc, hs;

	for (s = AL_UPDATE_INITIALIZING; s <= AL_UPDATE_RECONCILING; s++)
		for (same = 0; same <= 1; same++)
			for (comp = 0; comp <= 1; comp++)
				for (oc = AL_UPDATE_OUTCOME_REFUSED; oc <= AL_UPDATE_OUTCOME_APPLIED; oc++)
					for (hs = AL_UPDATE_PARTIAL; hs <= AL_UPDATE_COMPLETED; hs++) {
						al_update_state st = (al_update_state)s;
						al_update_mode m = al_update_choose_mode(st, same, comp);
						al_update_state n = al_update_next_state(st, m, (al_update_outcome)oc);
						al_update_hstate h = al_update_next_hstate(m, (al_update_outcome)oc, (al_update_hstate)hs);

						if (oc == AL_UPDATE_OUTCOME_REFUSED) {
							CU_ASSERT_EQUAL(n, st);
							continue;
						}
						if (m == AL_UPDATE_MODE_RECONCILE) {
							CU_ASSERT(st == AL_UPDATE_RECONCILING && same && comp);
							CU_ASSERT_EQUAL(n, AL_UPDATE_RECONCILING);
							CU_ASSERT_EQUAL(h, (al_update_hstate)hs);
							continue;
						}
						if (oc == AL_UPDATE_OUTCOME_APPLIED) {
							CU_ASSERT_EQUAL(n, AL_UPDATE_RECONCILING);
							CU_ASSERT_EQUAL(h, AL_UPDATE_COMPLETED);
						} else {
							CU_ASSERT_EQUAL(n, AL_UPDATE_UPDATING);
							CU_ASSERT_EQUAL(h, AL_UPDATE_PARTIAL);
						}
					}
	CU_ASSERT_STRING_EQUAL(al_update_state_name(AL_UPDATE_INITIALIZING), "Initializing");
	CU_ASSERT_STRING_EQUAL(al_update_state_name(AL_UPDATE_UPDATING), "Updating");
	CU_ASSERT_STRING_EQUAL(al_update_state_name(AL_UPDATE_RECONCILING), "Reconciling");
	CU_ASSERT_STRING_EQUAL(al_update_hstate_name(AL_UPDATE_PARTIAL), "Partial");
	CU_ASSERT_STRING_EQUAL(al_update_hstate_name(AL_UPDATE_COMPLETED), "Completed");
}

/* Random walks through many runs: the invariant holds on every path. */
static void test_update__random_walks_keep_the_invariant(void)
{
	unsigned seed = al_test_seed();
	int walk, step;

	for (walk = 0; walk < 2000; walk++) {
		al_update_state st = AL_UPDATE_INITIALIZING;
		int desired = -1, hist_rel = -1, hist_completed = 0;

		for (step = 0; step < 20; step++) {
			int target = rand_r(&seed) % 3, kind = rand_r(&seed) % 4;
			size_t total = 1 + (size_t)(rand_r(&seed) % 5), applied = (size_t)rand_r(&seed) % (total + 1);
			int rc = kind == 0 ? 0 : kind == 1 ? AL_ETIMEOUT : kind == 2 ? AL_ECANCELED : AL_EPROTO;
			int refused = rand_r(&seed) % 5 == 0;
			al_update_mode m = al_update_choose_mode(st, desired == target, hist_rel == target && hist_completed);
			al_update_outcome oc = refused ? AL_UPDATE_OUTCOME_REFUSED : al_update_outcome_of(rc, applied, total);
			al_update_state n = al_update_next_state(st, m, oc);

			if (oc != AL_UPDATE_OUTCOME_REFUSED && m != AL_UPDATE_MODE_RECONCILE) {
				al_update_hstate h;

				if (m == AL_UPDATE_MODE_NEW || hist_rel != target) {
					hist_rel = target;
					hist_completed = 0;
				}
				h = al_update_next_hstate(m, oc, hist_completed ? AL_UPDATE_COMPLETED : AL_UPDATE_PARTIAL);
				hist_completed = h == AL_UPDATE_COMPLETED;
				desired = target;
				/* Completed only when everything applied */
				if (hist_completed)
					CU_ASSERT(rc == 0 && applied == total);
			}
			st = n;
			/* Reconciling only with a Completed entry for the desired release */
			if (st == AL_UPDATE_RECONCILING)
				CU_ASSERT(hist_completed && hist_rel == desired);
		}
	}
}

static void test_update__failure_message_format(void)
{
	const char *errs[] = {"Deployment ns/a (f.yaml #1): boom", "e2", "e3", "e4"};
	char *m;

	m = al_update_failure_message("4.14.1", 0, 573, NULL, 0);
	CU_ASSERT_STRING_EQUAL(m, "update to 4.14.1 failed: applied 0 of 573");
	free(m);
	m = al_update_failure_message("4.14.1", 12, 33, errs, 1);
	CU_ASSERT_STRING_EQUAL(m, "update to 4.14.1 failed: applied 12 of 33; first errors: Deployment ns/a (f.yaml #1): boom");
	free(m);
	m = al_update_failure_message("4.14.2", 1, 2, errs, 4);
	CU_ASSERT_STRING_EQUAL(m, "update to 4.14.2 failed: applied 1 of 2; first errors: Deployment ns/a (f.yaml #1): boom; e2; e3");
	free(m);
}

/* The sample release: mirrored into a store, then planned (dry run). */
static void test_update__dry_run_on_sample_release(void)
{
	char *layout = al_path_join(al_test_source_dir(), "samples/layout");
	char *dst = al_path_join(al_test_tmpdir(), "update-store");
	char *loc = al_sprintf("oci:%s", layout);
	char *prefix = al_strdup("quay.io/airlock-samples");
	const char *rel[] = {"quay.io/airlock-samples/release:4.14.1-x86_64"};
	al_imageset_source src;
	al_store_opts so = {.create = 1};
	al_store *s = NULL;
	al_transfer_opts to;
	al_mirror_report rep;
	al_update_opts uo;
	al_update_result res = AL_UPDATE_RESULT_INIT;
	int rc;

	memset(&src, 0, sizeof(src));
	src.location = loc;
	src.prefix = prefix;
	memset(&to, 0, sizeof(to));
	to.sources = &src;
	to.nsources = 1;
	to.parallel = 2;
	memset(&rep, 0, sizeof(rep));
	CU_ASSERT_EQUAL(al_store_open(&s, dst, &so), 0);
	if (s == NULL)
		goto out;
	rc = al_mirror(s, rel, 1, NULL, 0, &to, &rep);
	CU_ASSERT_EQUAL(rc, 0);
	al_mirror_report_clear(&rep);
	memset(&uo, 0, sizeof(uo));
	uo.store = s;
	uo.target = "4.14.1";
	uo.dry_run = 1;
	/* no keys: refused, but the plan is still shown */
	rc = al_update_run(&uo, &res);
	CU_ASSERT_EQUAL(rc, AL_EVERIFY);
	CU_ASSERT_EQUAL(res.outcome, AL_UPDATE_OUTCOME_REFUSED);
	CU_ASSERT_PTR_NOT_NULL(res.plan);
	if (res.plan != NULL)
		CU_ASSERT_PTR_NOT_NULL(strstr(res.plan, "refused"));
	al_update_result_clear(&res);
	uo.force = 1;
	rc = al_update_run(&uo, &res);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(res.verified, 0);
	CU_ASSERT_EQUAL(res.accepted, 1);
	CU_ASSERT_EQUAL(res.applied, 0);
	CU_ASSERT(res.total > 20);
	CU_ASSERT_PTR_NOT_NULL(res.plan);
	if (res.plan != NULL) {
		char *l00 = strstr(res.plan, "level 00:"), *l10 = strstr(res.plan, "level 10:"), *l90 = strstr(res.plan, "level 90:");

		CU_ASSERT(l00 != NULL && l10 != NULL && l90 != NULL && l00 < l10 && l10 < l90);
		/* the single-node-only manifest is left out */
		CU_ASSERT_PTR_NULL(strstr(res.plan, "not-ha"));
	}
	al_update_result_clear(&res);
	/* unknown target */
	uo.target = "9.9.9";
	CU_ASSERT_EQUAL(al_update_run(&uo, &res), AL_ENOTFOUND);
	al_update_result_clear(&res);
	/* a real run needs a cluster */
	uo.target = "4.14.1";
	uo.dry_run = 0;
	CU_ASSERT_EQUAL(al_update_run(&uo, &res), AL_EINVAL);
	al_update_result_clear(&res);
out:
	al_store_free(s);
	free(layout);
	free(dst);
	free(loc);
	free(prefix);
}

static CU_TestInfo tests[] = {
	{"test_update__parse_name_numbered", test_update__parse_name_numbered},
	{"test_update__parse_name_unnumbered_and_weird", test_update__parse_name_unnumbered_and_weird},
	{"test_update__graph_levels_components_and_order", test_update__graph_levels_components_and_order},
	{"test_update__profiles_exclude_and_delete", test_update__profiles_exclude_and_delete},
	{"test_update__image_and_version_substitution", test_update__image_and_version_substitution},
	{"test_update__flags_and_bad_documents", test_update__flags_and_bad_documents},
	{"test_update__choose_mode_table", test_update__choose_mode_table},
	{"test_update__outcome_only_applied_when_everything_applied", test_update__outcome_only_applied_when_everything_applied},
	{"test_update__transitions_exhaustive", test_update__transitions_exhaustive},
	{"test_update__random_walks_keep_the_invariant", test_update__random_walks_keep_the_invariant},
	{"test_update__failure_message_format", test_update__failure_message_format},
	{"test_update__dry_run_on_sample_release", test_update__dry_run_on_sample_release},
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return al_test_run("update", tests);
}

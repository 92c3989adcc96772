/* test_update.c: unit tests for the updater: manifest names, graph grouping and order, profiles, image substitution, the state machine, messages, dry runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "al_test.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/imageset.h"
#include "json_int.h"
#include "airlock/mirror.h"
#include "airlock/update.h"
#include "update_int.h"

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
	al_update_load_opts o = AL_UPDATE_LOAD_OPTS_INIT;

	o.release_version = "4.14.2";
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
		"0000_10_-etcd_x.yaml",    /* the CVO's pattern: no leading '-' */
		"0000_10_etcd-_x.yaml",    /* ... no trailing '-' */
		"0000_10_etcd--op_x.yaml", /* ... no double '-' */
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
		CU_ASSERT_STRING_EQUAL(al_json_str(json_object_get(al_update__obj(&g->tasks[0]), "data"), "img"), test_images[1].image);
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
		c = json_object_get(json_object_get(json_object_get(json_object_get(al_update__obj(&g->tasks[0]), "spec"), "template"), "spec"),
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
		CU_ASSERT_STRING_EQUAL(al_json_str(json_array_get(json_object_get(json_object_get(al_update__obj(&g->tasks[0]), "status"),
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
	al_transfer_opts to = AL_TRANSFER_OPTS_INIT;
	al_mirror_report rep = AL_MIRROR_REPORT_INIT;
	al_update_opts uo = AL_UPDATE_OPTS_INIT;
	al_update_result res = AL_UPDATE_RESULT_INIT;
	int rc;

	memset(&src, 0, sizeof(src));
	src.location = loc;
	src.prefix = prefix;
	to.sources = &src;
	to.nsources = 1;
	to.parallel = 2;
	CU_ASSERT_EQUAL(al_store_open(&s, dst, &so), 0);
	if (s == NULL)
		goto out;
	rc = al_mirror(s, rel, 1, NULL, 0, &to, &rep);
	CU_ASSERT_EQUAL(rc, 0);
	al_mirror_report_clear(&rep);
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
		/* the single-node-only manifest is left out: not in the graph,
		 * listed with the reason after it */
		char *left = strstr(res.plan, "\nleft out: ");

		CU_ASSERT_PTR_NOT_NULL(left);
		if (left != NULL) {
			*left = '\0';
			CU_ASSERT_PTR_NULL(strstr(res.plan, "not-ha"));
			*left = '\n';
			CU_ASSERT_PTR_NOT_NULL(strstr(left, "not-ha.yaml #1): not in the profile"));
		}
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

/* --- the CVO's rules (docs/updater.md "What is applied", "In what order") */

/* A ConfigMap named name with extra annotation lines (each "    k: v\n"). */
static char *cm_ann(const char *name, const char *ann)
{
	return al_sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  annotations:\n" INC "%s", name,
			  ann != NULL ? ann : "");
}

static int graph_has(const al_update_graph *g, const char *name)
{
	size_t i;

	for (i = 0; g != NULL && i < g->ntasks; i++)
		if (strcmp(g->tasks[i].name, name) == 0)
			return 1;
	return 0;
}

static void test_update__library_go_include_feature_set_default_gets_only_default(void)
{
	static const char *const sets[] = {"Default", "TechPreviewNoUpgrade", "DevPreviewNoUpgrade", "CustomNoUpgrade", "OKD"};
	char *d[6], names[5][128];
	al_update_file f[6];
	al_update_load_opts o = opts_default();
	al_update_graph *g = NULL;
	size_t i;

	for (i = 0; i < 5; i++) {
		char ann[128];

		snprintf(ann, sizeof(ann), "    release.openshift.io/feature-set: %s\n", sets[i]);
		/* the same object in five variants, as the real clusterversions CRD */
		d[i] = al_sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: clusterversions\n  annotations:\n" INC
				  "%sdata:\n  set: %s\n",
				  ann, sets[i]);
		snprintf(names[i], sizeof(names[i]), "0000_00_cluster-version-operator_01_clusterversions-%s.crd.yaml", sets[i]);
		f[i] = file_of(names[i], d[i]);
	}
	d[5] = cm_ann("unknown-set", "    release.openshift.io/feature-set: Default,NoSuchSet\n");
	f[5] = file_of("0000_00_x_02.yaml", d[5]);
	/* the default (NULL) is Default */
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, 6, &o), 0);
	if (g != NULL) {
		CU_ASSERT_EQUAL(g->ntasks, 1);
		CU_ASSERT_STRING_EQUAL(al_json_str(json_object_get(al_update__obj(&g->tasks[0]), "data"), "set"), "Default");
		/* a value outside the known feature sets: never included */
		CU_ASSERT(!graph_has(g, "unknown-set"));
		CU_ASSERT_EQUAL(g->skipped_feature, 5);
	}
	al_update_graph_free(g);
	g = NULL;
	o.feature_set = "TechPreviewNoUpgrade";
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, 6, &o), 0);
	if (g != NULL) {
		CU_ASSERT_EQUAL(g->ntasks, 1);
		CU_ASSERT_STRING_EQUAL(al_json_str(json_object_get(al_update__obj(&g->tasks[0]), "data"), "set"), "TechPreviewNoUpgrade");
	}
	al_update_graph_free(g);
	for (i = 0; i < 6; i++)
		free(d[i]);
}

static void test_update__library_go_include_feature_gates_and_major_version(void)
{
	char *d[7];
	al_update_file f[7];
	al_update_load_opts o = opts_default();
	al_update_graph *g = NULL;
	const char *gates[] = {"GateA"};
	size_t i;

	d[0] = cm_ann("needs-a", "    release.openshift.io/feature-gate: GateA\n");
	d[1] = cm_ann("needs-b", "    release.openshift.io/feature-gate: GateB\n");
	d[2] = cm_ann("not-a", "    release.openshift.io/feature-gate: -GateA\n");
	d[3] = cm_ann("both", "    release.openshift.io/feature-gate: GateA\n    release.openshift.io/feature-set: Default\n");
	d[4] = al_sprintf("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: m4.x.io\n"
			  "  annotations:\n" INC "    release.openshift.io/major-version: \"4\"\n");
	d[5] = al_sprintf("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: m5.x.io\n"
			  "  annotations:\n" INC "    release.openshift.io/major-version: \"5,-4\"\n");
	/* major-version on a kind that is neither a FeatureGate nor a CRD */
	d[6] = cm_ann("major-on-cm", "    release.openshift.io/major-version: \"4\"\n");
	f[0] = file_of("0000_10_a_00.yaml", d[0]);
	f[1] = file_of("0000_10_a_01.yaml", d[1]);
	f[2] = file_of("0000_10_a_02.yaml", d[2]);
	f[3] = file_of("0000_10_a_03.yaml", d[3]);
	f[4] = file_of("0000_10_a_04.yaml", d[4]);
	f[5] = file_of("0000_10_a_05.yaml", d[5]);
	f[6] = file_of("0000_10_a_06.yaml", d[6]);
	/* gates unknown: no gate filter (the CVO without enabled gates) */
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, 7, &o), 0);
	CU_ASSERT(graph_has(g, "needs-a") && graph_has(g, "needs-b") && graph_has(g, "not-a") && graph_has(g, "both"));
	CU_ASSERT(graph_has(g, "m4.x.io"));
	CU_ASSERT(!graph_has(g, "m5.x.io"));
	CU_ASSERT(!graph_has(g, "major-on-cm"));
	al_update_graph_free(g);
	g = NULL;
	o.feature_gates = gates;
	o.nfeature_gates = 1;
	o.feature_gates_known = 1;
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, 7, &o), 0);
	CU_ASSERT(graph_has(g, "needs-a"));
	CU_ASSERT(!graph_has(g, "needs-b"));
	CU_ASSERT(!graph_has(g, "not-a"));
	/* a feature set and a feature gate on one manifest: excluded */
	CU_ASSERT(!graph_has(g, "both"));
	al_update_graph_free(g);
	g = NULL;
	o.release_version = "5.0.0";
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, 7, &o), 0);
	CU_ASSERT(!graph_has(g, "m4.x.io"));
	CU_ASSERT(graph_has(g, "m5.x.io"));
	al_update_graph_free(g);
	for (i = 0; i < 7; i++)
		free(d[i]);
}

static void test_update__library_go_include_disabled_capability_skipped(void)
{
	char *d[5];
	al_update_file f[5];
	al_update_load_opts o = opts_default();
	al_update_graph *g = NULL;
	const char *caps[] = {"Console", "marketplace"};
	size_t i;

	d[0] = cm_ann("console", "    capability.openshift.io/name: Console\n");
	d[1] = cm_ann("console-and-insights", "    capability.openshift.io/name: Console+Insights\n");
	d[2] = cm_ann("marketplace", "    capability.openshift.io/name: marketplace\n");
	d[3] = cm_ann("unknown-cap", "    capability.openshift.io/name: NoSuchCapability\n");
	d[4] = al_sprintf("apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: insights\n"
			  "  annotations:\n" INC "    capability.openshift.io/name: Insights\n"
			  "status:\n  versions:\n  - name: operator\n    version: 0.0.1-snapshot\n");
	for (i = 0; i < 5; i++)
		f[i] = file_of(i == 4 ? "0000_50_insights_99_co.yaml" : i == 0 ? "0000_50_a_00.yaml" : i == 1 ? "0000_50_a_01.yaml" : i == 2 ? "0000_50_a_02.yaml" : "0000_50_a_03.yaml", d[i]);
	/* capabilities unknown (no ClusterVersion): nothing filtered */
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, 5, &o), 0);
	CU_ASSERT(g != NULL && g->ntasks == 5);
	al_update_graph_free(g);
	g = NULL;
	o.capabilities = caps;
	o.ncapabilities = 2;
	o.capabilities_known = 1;
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, 5, &o), 0);
	CU_ASSERT(graph_has(g, "console"));
	CU_ASSERT(graph_has(g, "marketplace"));
	/* every capability of a '+' list must be enabled */
	CU_ASSERT(!graph_has(g, "console-and-insights"));
	CU_ASSERT(!graph_has(g, "unknown-cap"));
	/* the operator of a disabled capability is not waited for: not a task */
	CU_ASSERT(!graph_has(g, "insights"));
	if (g != NULL)
		CU_ASSERT_EQUAL(g->skipped_capability, 3);
	al_update_graph_free(g);
	for (i = 0; i < 5; i++)
		free(d[i]);
}

static void test_update__cvo_capabilities_baseline_additional_and_implicit(void)
{
	json_t *cv = json_loads("{\"spec\":{\"capabilities\":{\"baselineCapabilitySet\":\"None\","
				"\"additionalEnabledCapabilities\":[\"marketplace\"]}},"
				"\"status\":{\"capabilities\":{\"enabledCapabilities\":[\"Console\",\"marketplace\"]}}}",
				0, NULL);
	json_t *cv2 = json_loads("{\"spec\":{}}", 0, NULL);
	json_t *bad = json_loads("{\"spec\":{\"capabilities\":{\"baselineCapabilitySet\":\"v9.99\"}}}", 0, NULL);
	const char **v = NULL;
	size_t n = 0, i;
	int console = 0, ingress = 0, capi = 0;

	CU_ASSERT_EQUAL(al_update_cluster_capabilities(cv, &v, &n), 0);
	/* None + additional marketplace + Console once enabled (implicitly) */
	CU_ASSERT_EQUAL(n, 2);
	for (i = 0; i < n; i++)
		console |= strcmp(v[i], "Console") == 0;
	CU_ASSERT(console);
	free(v);
	v = NULL;
	/* no spec.capabilities: vCurrent */
	CU_ASSERT_EQUAL(al_update_cluster_capabilities(cv2, &v, &n), 0);
	for (i = 0; i < n; i++) {
		ingress |= strcmp(v[i], "Ingress") == 0;
		capi |= strcmp(v[i], "ClusterAPI") == 0;
	}
	CU_ASSERT(ingress);
	/* feature-gated capabilities are not in the baseline without their gates */
	CU_ASSERT(!capi);
	free(v);
	v = NULL;
	CU_ASSERT_EQUAL(al_update_cluster_capabilities(bad, &v, &n), AL_EINVAL);
	json_decref(cv);
	json_decref(cv2);
	json_decref(bad);
}

static void test_update__library_go_duplicate_resource_refused_naming_both_files(void)
{
	char *a = cm_ann("same", NULL), *b = al_sprintf("%s---\n%s", a, a), *other = al_sprintf("%s", a);
	char *ns1 = al_sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n  namespace: one\n  annotations:\n" INC);
	char *filtered = al_sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n  annotations:\n" INC
				    "    release.openshift.io/feature-set: TechPreviewNoUpgrade\n");
	al_update_file f[2];
	al_update_load_opts o = opts_default();
	al_update_graph *g = NULL;

	/* twice in one file: refused (library-go ParseManifests) */
	f[0] = file_of("0000_10_a_00.yaml", b);
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, 1, &o), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "duplicate resource"));
	/* in two files: refused, both named */
	f[0] = file_of("0000_10_a_00.yaml", a);
	f[1] = file_of("0000_20_b_00.yaml", other);
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, 2, &o), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "0000_10_a_00.yaml"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "0000_20_b_00.yaml"));
	/* another namespace is another object */
	f[1] = file_of("0000_20_b_00.yaml", ns1);
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, 2, &o), 0);
	al_update_graph_free(g);
	g = NULL;
	/* a variant the filters leave out is no duplicate */
	f[1] = file_of("0000_20_b_00.yaml", filtered);
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, 2, &o), 0);
	al_update_graph_free(g);
	free(a);
	free(b);
	free(other);
	free(ns1);
	free(filtered);
}

/* "L:comp:name,name|comp:name;L2:..." : levels ';', components '|'. */
static char *graph_shape(const al_update_graph *g)
{
	al_buf b = AL_BUF_INIT(1 << 20);
	size_t li, ci, ti;

	for (li = 0; g != NULL && li < g->nlevels; li++) {
		const al_update_level *lv = &g->levels[li];

		al_buf_printf(&b, "%s%s:", li ? ";" : "", lv->number ? lv->number : "-");
		for (ci = lv->first; ci < lv->first + lv->count; ci++) {
			const al_update_component *c = &g->components[ci];

			al_buf_printf(&b, "%s%s=", ci > lv->first ? "|" : "", c->name);
			for (ti = c->first; ti < c->first + c->count; ti++)
				al_buf_printf(&b, "%s%s", ti > c->first ? "," : "", g->tasks[ti].name);
		}
	}
	return al_buf_detach(&b, NULL);
}

static void test_update__cvo_by_number_and_component_unmatched_names_serial_in_place(void)
{
	static const char *const names[] = {
		"0000-early.yaml",                        /* '-' sorts before '_': first, serially */
		"0000_05_a_00.yaml", "0000_05_b_00.yaml", /* two components: parallel */
		"0000_10_consoleclidownload.crd.yaml",    /* real name the pattern does not match */
		"0000_10_c_00.yaml",                      /* one component: serial */
		"0000_5_a_00.yaml",                       /* "5" is not "05" or "50": its own level, after "50" */
		"0000_50_cluster_monitoring_operator_01-namespace.yaml", /* component "cluster" */
		"0000_50_cluster-x_00.yaml",
		"zz.yaml",
	};
	/* byte order of the names: '-' < '0'..'9' < '_' < 'a'..'z', so
	 * "0000_10_c_" < "0000_10_co...", "0000_50" < "0000_5_" and
	 * "cluster-x" < "cluster_" */
	static const char *const want = "-:=n0;05:a=n1|b=n2;10:c=n4;-:=n3;50:cluster-x=n7|cluster=n6;5:a=n5;-:=n8";
	size_t n = sizeof(names) / sizeof(names[0]), i;
	char *d[16];
	al_update_file f[16];
	al_update_load_opts o = opts_default();
	al_update_graph *g = NULL;
	char *shape;

	for (i = 0; i < n; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "n%zu", i);
		d[i] = doc("ConfigMap", nm, NULL);
		f[n - 1 - i] = file_of(names[i], d[i]); /* given in reverse */
	}
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, n, &o), 0);
	shape = graph_shape(g);
	CU_ASSERT_PTR_NOT_NULL(shape);
	if (shape != NULL) {
		CU_ASSERT_STRING_EQUAL(shape, want);
		if (strcmp(shape, want) != 0)
			printf("\n got: %s\nwant: %s\n", shape, want);
	}
	free(shape);
	al_update_graph_free(g);
	for (i = 0; i < n; i++)
		free(d[i]);
}

static void test_update__cvo_split_on_jobs_is_a_barrier(void)
{
	char *d[5];
	al_update_file f[5];
	al_update_load_opts o = opts_default();
	al_update_graph *g = NULL;
	char *shape;
	static const char *const want = "50:a=a0,a1;50:b=job;50:b=b1|c=c0";
	size_t i;

	d[0] = doc("ConfigMap", "a0", NULL);
	d[1] = doc("ConfigMap", "a1", NULL);
	d[2] = al_sprintf("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: job\n  namespace: x\n  annotations:\n" INC);
	d[3] = doc("ConfigMap", "b1", NULL);
	d[4] = doc("ConfigMap", "c0", NULL);
	f[0] = file_of("0000_50_a_00.yaml", d[0]);
	f[1] = file_of("0000_50_a_01.yaml", d[1]);
	f[2] = file_of("0000_50_b_00_job.yaml", d[2]);
	f[3] = file_of("0000_50_b_01.yaml", d[3]);
	f[4] = file_of("0000_50_c_00.yaml", d[4]);
	CU_ASSERT_EQUAL(al_update_graph_build(&g, f, 5, &o), 0);
	shape = graph_shape(g);
	if (shape != NULL) {
		CU_ASSERT_STRING_EQUAL(shape, want);
		if (strcmp(shape, want) != 0)
			printf("\n got: %s\nwant: %s\n", shape, want);
	}
	if (g != NULL && g->ntasks == 5)
		CU_ASSERT(g->tasks[2].job);
	free(shape);
	al_update_graph_free(g);
	for (i = 0; i < 5; i++)
		free(d[i]);
}

static void test_update__cvo_manifests_dir_first_rendered(void)
{
	char *cvo_dep = al_sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cluster-version-operator\n"
				   "  namespace: openshift-cluster-version\n  annotations:\n" INC
				   "spec:\n  template:\n    spec:\n      containers:\n      - image: '{{.ReleaseImage}}'\n"
				   "        env:\n        - name: CLUSTER_PROFILE\n          value: '{{ .ClusterProfile }}'\n"
				   "        - name: RULE\n          value: 'a {{ \"{{ $labels.risk }}\" }} b'\n");
	char *bad = al_sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: unknown-field\n  annotations:\n" INC
			       "data:\n  x: '{{ .NoSuchField }}'\n");
	char *rel = doc("ConfigMap", "release-00", NULL);
	al_update_file cvo[3], files[1];
	al_update_load_opts o = opts_default();
	al_update_graph *g = NULL;

	cvo[0] = file_of("0000_90_cluster-version-operator_02_x.yaml", cvo_dep);
	cvo[1] = file_of("0000_50_unknown-field.yaml", bad);
	cvo[2] = file_of("image-references", "{}");
	files[0] = file_of("0000_00_a_00.yaml", rel);
	o.release_image = "quay.io/x/release@sha256:abc";
	CU_ASSERT_EQUAL(al_update_graph_build2(&g, cvo, 3, files, 1, &o), 0);
	if (g != NULL && g->ntasks == 2) {
		const json_t *c0 = json_array_get(json_object_get(json_object_get(json_object_get(json_object_get(
						  al_update__obj(&g->tasks[0]), "spec"), "template"), "spec"), "containers"), 0);

		/* manifests/ before release-manifests/, whatever the levels */
		CU_ASSERT_STRING_EQUAL(g->tasks[0].file, "manifests/0000_90_cluster-version-operator_02_x.yaml");
		CU_ASSERT_STRING_EQUAL(g->tasks[1].name, "release-00");
		CU_ASSERT_STRING_EQUAL(al_json_str(c0, "image"), "quay.io/x/release@sha256:abc");
		CU_ASSERT_STRING_EQUAL(al_json_str(json_array_get(json_object_get(c0, "env"), 0), "value"),
				       AL_UPDATE_DEFAULT_PROFILE);
		CU_ASSERT_STRING_EQUAL(al_json_str(json_array_get(json_object_get(c0, "env"), 1), "value"),
				       "a {{ $labels.risk }} b");
		/* a template that fails is skipped, as the CVO skips it */
		CU_ASSERT_EQUAL(g->skipped_template, 1);
	} else {
		CU_FAIL("expected two tasks");
	}
	al_update_graph_free(g);
	free(cvo_dep);
	free(bad);
	free(rel);
}

/* blang/semver ordering, which the CVO's preconditions compare with. */
static void test_update__semver_order(void)
{
	static const char *const asc[] = {
	    "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
	    "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0",
	    "4.9.0", "4.14.0-ec.1", "4.14.0", "4.14.1", "4.14.10", "5.0.0",
	};
	size_t i, j;
	int c = 9;

	for (i = 0; i < sizeof(asc) / sizeof(asc[0]); i++)
		for (j = 0; j < sizeof(asc) / sizeof(asc[0]); j++) {
			CU_ASSERT_EQUAL(al_update_semver_cmp(asc[i], asc[j], &c), 0);
			CU_ASSERT_EQUAL(c, i < j ? -1 : i > j ? 1 : 0);
		}
	CU_ASSERT_EQUAL(al_update_semver_cmp("4.14.1+build.5", "4.14.1", &c), 0);
	CU_ASSERT_EQUAL(c, 0);
	CU_ASSERT_EQUAL(al_update_semver_cmp("4.14", "4.14.1", &c), AL_EPARSE);
	CU_ASSERT_EQUAL(al_update_semver_cmp("4.014.1", "4.14.1", &c), AL_EPARSE);
	CU_ASSERT_EQUAL(al_update_semver_cmp("4.14.1-", "4.14.1", &c), AL_EPARSE);
	CU_ASSERT_EQUAL(al_update_semver_cmp("v4.14.1", "4.14.1", &c), AL_EPARSE);
}

static json_t *kept_gates;

static int pre(const char *cur, const char *tgt, const al_update_blocker *b, size_t nb, char **msg)
{
	return al_update_check_preconditions(cur, tgt, b, nb, msg);
}

/* upgradeable.go, rollback.go, gianthop.go decision by decision. */
static void test_update__preconditions_as_the_cvo(void)
{
	const al_update_blocker co = {"ClusterOperator", "etcd", "AdminAckRequired", "ack needed"};
	const al_update_blocker cv = {"ClusterVersion", "version", "ClusterVersionOverridesSet", "overrides"};
	al_update_blocker two[2];
	char *m = NULL;

	two[0] = co;
	two[1] = cv;
	/* nothing to compare with: no check */
	CU_ASSERT_EQUAL(pre(NULL, "4.16.0", &co, 1, &m), 0);
	CU_ASSERT_PTR_NULL(m);
	CU_ASSERT_EQUAL(pre("not-a-version", "4.16.0", &co, 1, &m), 0); /* InvalidCurrentVersion: a warning */
	/* Upgradeable=False: minor blocked, patch and same version pass */
	CU_ASSERT_EQUAL(pre("4.14.1", "4.15.0", &co, 1, &m), 1);
	CU_ASSERT_STRING_EQUAL(m, "Precondition \"ClusterVersionUpgradeable\" failed because of "
				  "\"ClusterOperatorNotUpgradeable\": Cluster operator etcd should not be upgraded "
				  "between minor versions: Upgradeable=False (AdminAckRequired): ack needed");
	free(m);
	CU_ASSERT_EQUAL(pre("4.14.1", "4.14.9", &co, 1, &m), 0);
	CU_ASSERT_EQUAL(pre("4.14.1", "4.14.1", &co, 1, &m), 0);
	CU_ASSERT_EQUAL(pre("4.14.1", "5.0.0", &cv, 1, &m), 1); /* major blocked too; 4 -> 5.0 is no giant hop */
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "failed because of \"ClusterVersionOverridesSet\": ClusterVersion version"));
	free(m);
	/* without blockers a minor update passes */
	CU_ASSERT_EQUAL(pre("4.14.1", "4.15.0", NULL, 0, &m), 0);
	/* Rollback: any lower version (stricter than the CVO's z-stream rollback) */
	CU_ASSERT_EQUAL(pre("4.14.1", "4.14.0", NULL, 0, &m), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "\"ClusterVersionRollback\" failed because of \"LowDesiredVersion\": "
					 "4.14.0 is less than the current target 4.14.1"));
	free(m);
	CU_ASSERT_EQUAL(pre("4.14.1", "4.14.1-rc.1", NULL, 0, &m), 1);
	free(m);
	/* GiantHop */
	CU_ASSERT_EQUAL(pre("4.14.1", "4.16.0", NULL, 0, &m), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "\"MultipleMinorVersionsUpdate\": 4.16.0 is more than one minor version "
					 "beyond the current target 4.14.1 (4.16 > 4.(14+1))"));
	free(m);
	CU_ASSERT_EQUAL(pre("4.14.1", "6.0.0", NULL, 0, &m), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "\"MajorVersionUpdate\""));
	free(m);
	CU_ASSERT_EQUAL(pre("4.14.1", "5.1.0", NULL, 0, &m), 1);
	free(m);
	/* several: Summarize's list, each named */
	CU_ASSERT_EQUAL(pre("4.14.1", "4.16.0", two, 2, &m), 3);
	CU_ASSERT_EQUAL(strncmp(m, "Multiple precondition checks failed:\n* Precondition \"ClusterVersionUpgradeable\"",
				strlen("Multiple precondition checks failed:\n* Precondition \"ClusterVersionUpgradeable\"")),
			0);
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "\n* Precondition \"ClusterVersionGiantHop\""));
	free(m);
	/* a target that is no version fails */
	CU_ASSERT_EQUAL(pre("4.14.1", "latest", NULL, 0, &m), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "InvalidDesiredVersion"));
	free(m);
}

/* The blocking gates of admin-gates against admin-acks, for current. */
static size_t acks(const char *cur, const char *gates, const char *ackdata, al_update_blocker *bl, size_t max)
{
	json_t *g = json_loads(gates, 0, NULL), *a = ackdata != NULL ? json_loads(ackdata, 0, NULL) : NULL;
	size_t n = 0;

	CU_ASSERT_TRUE(json_object_size(g) <= max);
	if (json_object_size(g) <= max)
		al_update_admin_ack_blockers(cur, g, a, bl, &n);
	/* the blockers borrow the keys: keep g alive in a static list */
	json_decref(a);
	json_decref(kept_gates);
	kept_gates = g;
	return n;
}

/* pkg/risk/adminack Test_New's cases (current 4.21), and the gate turned
 * into a precondition failure: a minor update blocked, a patch not. */
static void test_update__cvo_admin_acks(void)
{
	al_update_blocker bl[4];
	char *m = NULL;

	/* admin ack gate does not apply to version */
	CU_ASSERT_EQUAL(acks("4.21.0", "{\"ack-4.8-test\": \"Testing\"}", "{}", bl, 4), 0);
	/* admin-gates configmap gate does not have value */
	CU_ASSERT_EQUAL(acks("4.21.0", "{\"ack-4.21-test\": \"\"}", "{}", bl, 4), 1);
	CU_ASSERT_STRING_EQUAL(bl[0].reason, "AdminAckGateEmpty");
	/* admin ack required */
	CU_ASSERT_EQUAL(acks("4.21.0", "{\"ack-4.21-test\": \"Description.\"}", "{}", bl, 4), 1);
	CU_ASSERT_STRING_EQUAL(bl[0].name, "ack-4.21-test");
	CU_ASSERT_STRING_EQUAL(bl[0].reason, "AdminAckRequired");
	CU_ASSERT_STRING_EQUAL(bl[0].message, "Description.");
	/* admin ack required and admin ack gate does not apply to version */
	CU_ASSERT_EQUAL(acks("4.21.0", "{\"ack-4.21-test\": \"A.\", \"ack-4.22-test\": \"B.\"}", "{}", bl, 4), 1);
	CU_ASSERT_STRING_EQUAL(bl[0].name, "ack-4.21-test");
	/* multiple admin acks required: sorted by name */
	CU_ASSERT_EQUAL(acks("4.21.0", "{\"ack-4.21-b\": \"2\", \"ack-4.21-a\": \"1\", \"ack-4.21-c\": \"3\"}", "{}", bl, 4), 3);
	CU_ASSERT_STRING_EQUAL(bl[0].name, "ack-4.21-a");
	CU_ASSERT_STRING_EQUAL(bl[1].name, "ack-4.21-b");
	CU_ASSERT_STRING_EQUAL(bl[2].name, "ack-4.21-c");
	/* admin ack found; 2 of 3 found; only exactly "true" acknowledges */
	CU_ASSERT_EQUAL(acks("4.21.0", "{\"ack-4.21-test\": \"D.\"}", "{\"ack-4.21-test\": \"true\"}", bl, 4), 0);
	CU_ASSERT_EQUAL(acks("4.21.0", "{\"ack-4.21-a\": \"1\", \"ack-4.21-b\": \"2\", \"ack-4.21-c\": \"3\"}",
			     "{\"ack-4.21-a\": \"true\", \"ack-4.21-c\": \"true\"}", bl, 4),
			1);
	CU_ASSERT_STRING_EQUAL(bl[0].name, "ack-4.21-b");
	CU_ASSERT_EQUAL(acks("4.21.0", "{\"ack-4.21-test\": \"D.\"}", "{\"ack-4.21-test\": \"True\"}", bl, 4), 1);
	/* admin-acks configmap not found: every applicable gate blocks */
	CU_ASSERT_EQUAL(acks("4.21.0", "{\"ack-4.21-a\": \"1\"}", NULL, bl, 4), 1);
	/* gateApplicableToCurrentVersion: the key's format */
	CU_ASSERT_EQUAL(acks("4.21.0", "{\"ack-4.21--x\": \"1\", \"ack-3.11-x\": \"1\", \"ack-4.21\": \"1\", \"x-4.21-y\": \"1\"}", "{}", bl, 4),
			4);
	CU_ASSERT_STRING_EQUAL(bl[0].reason, "AdminAckGateInvalid");
	CU_ASSERT_STRING_EQUAL(bl[3].reason, "AdminAckGateInvalid");
	CU_ASSERT_EQUAL(acks("4.17.3", "{\"ack-4.17-kube-1.31-api-removals-in-4.18\": \"Removed APIs.\"}", "{}", bl, 4), 1);
	/* as a precondition: a minor update is refused, a patch update is not */
	CU_ASSERT_EQUAL(pre("4.17.3", "4.18.0", bl, 1, &m), 1);
	CU_ASSERT_PTR_NOT_NULL(m != NULL ? strstr(m, "failed because of \"AdminAckRequired\": Removed APIs. (gate ack-4.17-kube-1.31-api-removals-in-4.18") : NULL);
	CU_ASSERT_PTR_NOT_NULL(m != NULL ? strstr(m, "patch configmap admin-acks") : NULL);
	free(m);
	CU_ASSERT_EQUAL(pre("4.17.3", "4.17.9", bl, 1, &m), 0);
	json_decref(kept_gates);
	kept_gates = NULL;
}

/* al_update_merge of required (JSON) on live (JSON or NULL); the value at
 * the dotted path of the result, as compact JSON (caller frees). */
static char *merged_at(const char *group, const char *kind, const char *req, const char *live, const char *path)
{
	json_t *r = json_loads(req, 0, NULL), *l = live != NULL ? json_loads(live, 0, NULL) : NULL, *m = NULL;
	const json_t *v;
	char *out = NULL, seg[64];
	const char *p = path;

	if (r == NULL || al_update_merge(&m, r, l, group, kind) != 0)
		goto out;
	v = m;
	while (v != NULL && *p != '\0') {
		size_t n = strcspn(p, ".");

		snprintf(seg, sizeof(seg), "%.*s", (int)n, p);
		v = json_object_get(v, seg);
		p += n + (p[n] == '.');
	}
	out = v != NULL ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : strdup("absent");
out:
	json_decref(r);
	json_decref(l);
	json_decref(m);
	return out;
}

static void check_merged(const char *group, const char *kind, const char *req, const char *live, const char *path,
			 const char *want)
{
	char *got = merged_at(group, kind, req, live, path);

	CU_ASSERT_PTR_NOT_NULL(got);
	if (got != NULL && strcmp(got, want) != 0)
		fprintf(stderr, "merge %s %s: got %s, want %s\n", kind, path, got, want);
	CU_ASSERT_TRUE(got != NULL && strcmp(got, want) == 0);
	free(got);
}

/* lib/resourcemerge: EnsureConfigMap (mergeMap), EnsureObjectMeta,
 * EnsureClusterRole with an aggregationRule; a Deployment (merged on the
 * live object) is created as the manifest says and scaled back. */
static void test_update__cvo_resourcemerge(void)
{
	/* the CVO creates a missing object from the manifest as it is */
	check_merged("apps", "Deployment", "{\"spec\": {}}", NULL, "spec", "{}");
	check_merged("apps", "Deployment", "{\"spec\": {}}", "{\"spec\": {\"replicas\": 2, \"paused\": true}}", "spec.replicas",
		     "1");
	check_merged("apps", "Deployment", "{\"spec\": {}}", "{\"spec\": {\"replicas\": 2, \"paused\": true}}", "spec.paused",
		     "absent");
	/* EnsureConfigMap: data keys the manifest dropped stay, its own win */
	check_merged("", "ConfigMap", "{\"data\": {\"k1\": \"new\"}}", "{\"data\": {\"k0\": \"kept\", \"k1\": \"old\"}}", "data",
		     "{\"k0\":\"kept\",\"k1\":\"new\"}");
	check_merged("", "ConfigMap", "{}", "{\"binaryData\": {\"b\": \"AA==\"}}", "binaryData", "{\"b\":\"AA==\"}");
	/* EnsureObjectMeta: labels and annotations merged, owner refs by uid */
	check_merged("", "ServiceAccount", "{\"metadata\": {\"labels\": {\"a\": \"1\"}}}",
		     "{\"metadata\": {\"labels\": {\"a\": \"0\", \"b\": \"2\"}, \"annotations\": {\"x\": \"y\"}}}", "metadata",
		     "{\"annotations\":{\"x\":\"y\"},\"labels\":{\"a\":\"1\",\"b\":\"2\"}}");
	check_merged("", "ConfigMap", "{\"metadata\": {\"ownerReferences\": [{\"uid\": \"u1\", \"name\": \"new\"}]}}",
		     "{\"metadata\": {\"ownerReferences\": [{\"uid\": \"u1\", \"name\": \"old\"}, {\"uid\": \"u2\", \"name\": \"other\"}]}}",
		     "metadata.ownerReferences", "[{\"name\":\"new\",\"uid\":\"u1\"},{\"name\":\"other\",\"uid\":\"u2\"}]");
	/* EnsureClusterRole: an aggregated role's rules are the control plane's */
	check_merged("rbac.authorization.k8s.io", "ClusterRole", "{\"aggregationRule\": {}, \"rules\": []}",
		     "{\"rules\": [{\"verbs\": [\"get\"]}]}", "rules", "[{\"verbs\":[\"get\"]}]");
	/* kinds without an Ensure function are not merged (plain apply) */
	CU_ASSERT_EQUAL(al_update_merge_kind("", "ConfigMap"), AL_UPDATE_MERGE_APPLY);
	CU_ASSERT_EQUAL(al_update_merge_kind("apps", "Deployment"), AL_UPDATE_MERGE_LIVE);
	CU_ASSERT_EQUAL(al_update_merge_kind("", "Service"), AL_UPDATE_MERGE_LIVE);
	CU_ASSERT_EQUAL(al_update_merge_kind("", "Secret"), AL_UPDATE_MERGE_NONE);
	CU_ASSERT_EQUAL(al_update_merge_kind("config.openshift.io", "ClusterOperator"), AL_UPDATE_MERGE_NONE);
}

/* v with every zero member (null, false, 0, "", [], {}) removed,
 * recursively: equality.Semantic.DeepEqual's view of a Go structure,
 * where an unset field and its zero value are the same. */
static json_t *pruned(const json_t *v)
{
	json_t *o, *x;
	const char *k;
	size_t i;

	if (json_is_object(v)) {
		o = json_object();
		json_object_foreach((json_t *)v, k, x)
		{
			json_t *p = pruned(x);

			if (p != NULL)
				json_object_set_new(o, k, p);
		}
		if (json_object_size(o) == 0) {
			json_decref(o);
			return NULL;
		}
		return o;
	}
	if (json_is_array(v)) {
		if (json_array_size(v) == 0)
			return NULL;
		o = json_array();
		json_array_foreach(v, i, x)
		{
			json_t *p = pruned(x);

			json_array_append_new(o, p != NULL ? p : json_object());
		}
		return o;
	}
	if (v == NULL || json_is_null(v) || json_is_false(v) || (json_is_integer(v) && json_integer_value(v) == 0) ||
	    (json_is_string(v) && json_string_length(v) == 0))
		return NULL;
	return json_deep_copy(v);
}

static int sem_equal(const json_t *a, const json_t *b)
{
	json_t *pa = pruned(a), *pb = pruned(b);
	int eq = (pa == NULL && pb == NULL) || (pa != NULL && pb != NULL && json_equal(pa, pb));

	json_decref(pa);
	json_decref(pb);
	return eq;
}

/* One merge of a case: the part's rule on the live side (a holder object
 * for the list parts), as the CVO's test calls it. */
static int merge_case(const char *part, json_t *obj, const json_t *input, int *modified)
{
	if (strcmp(part, "Deployment") == 0)
		return al_update_merge_live(obj, input, "apps", "Deployment", modified);
	if (strcmp(part, "Job") == 0)
		return al_update_merge_live(obj, input, "batch", "Job", modified);
	if (strcmp(part, "PodSpec") == 0)
		return al_update_merge_part(obj, input, part, modified);
	return al_update_merge_part(obj, json_object_get(input, "v"), part, modified);
}

/* The case's value as the object merge_case works on: a Job for the
 * JobSpec cases, {"v"-less holder} for the list parts. */
static json_t *case_object(const char *part, const json_t *v)
{
	static const struct {
		const char *part, *key;
	} holders[] = {{"ServicePorts", "ports"}, {"ServiceType", "type"}, {"Tolerations", "tolerations"}, {"EnvVar", "env"}};
	size_t i;

	if (strcmp(part, "Job") == 0)
		return json_pack("{s:O}", "spec", v);
	for (i = 0; i < sizeof(holders) / sizeof(holders[0]); i++)
		if (strcmp(part, holders[i].part) == 0)
			return json_pack("{s:O}", holders[i].key, v);
	return json_deep_copy(v);
}

/* The CVO's defaulting step (defaultPodSpec, defaultDeployment,
 * defaultJob): the object merged with itself. */
static int default_case(const char *part, json_t *obj)
{
	json_t *self;
	int modified, rc;

	if (strcmp(part, "PodSpec") != 0 && strcmp(part, "Deployment") != 0 && strcmp(part, "Job") != 0)
		return 0;
	self = json_deep_copy(obj);
	rc = merge_case(part, obj, self, &modified);
	json_decref(self);
	return rc;
}

/*
 * lib/resourcemerge's own cases (tests/data/cvo-merge/cases.json, from
 * core_test.go TestEnsurePodSpec, TestEnsureServicePorts,
 * TestEnsureTolerations, TestEnsureEnvVar, apps_test.go
 * TestEnsureDeployment, batch_test.go TestEnsureJob_JobSpec and
 * TestEnsureJob_JobSpec_Selector), run the way each CVO test runs them:
 * existing and expected defaulted first where the CVO test does, then the
 * merge, then modified and the result compared semantically.
 */
static void test_update__cvo_merge_cases(void)
{
	char *path = al_path_join(al_test_source_dir(), "tests/data/cvo-merge/cases.json");
	json_t *doc = NULL, *c;
	size_t i, failed = 0;

	CU_ASSERT_EQUAL_FATAL(path != NULL && al_json_load_file(&doc, path, 1 << 20) == 0, 1);
	free(path);
	CU_ASSERT_TRUE(json_array_size(json_object_get(doc, "cases")) >= 86);
	json_array_foreach(json_object_get(doc, "cases"), i, c)
	{
		const char *part = al_json_str(c, "part"), *name = al_json_str(c, "name");
		json_t *ex = case_object(part, json_object_get(c, "existing"));
		json_t *in = case_object(part, json_object_get(c, "input"));
		const json_t *want_v = json_object_get(c, "expected");
		json_t *want = NULL, *input = NULL;
		int modified = -1, rc, ok;

		if (strcmp(part, "PodSpec") == 0 || strcmp(part, "Deployment") == 0 || strcmp(part, "Job") == 0)
			input = json_incref(strcmp(part, "Job") == 0 ? in : json_object_get(c, "input"));
		else
			input = json_pack("{s:O}", "v", json_object_get(c, "input"));
		/* TestEnsureJob_JobSpec: the expected Job is the existing one
		 * when nothing changes, else the required one */
		if (want_v != NULL)
			want = case_object(part, want_v);
		else
			want = json_deep_copy(json_is_true(json_object_get(c, "modified")) ? in : ex);
		/* TestEnsureJob_JobSpec_Selector: the CVO panics while
		 * defaulting already */
		rc = default_case(part, ex);
		if (rc == 0)
			rc = default_case(part, want);
		if (rc == 0)
			rc = merge_case(part, ex, input, &modified);
		al_error_clear();
		if (json_is_true(json_object_get(c, "error"))) {
			ok = rc == AL_EINVAL;
		} else {
			/* the PodSpec cases default again: structures that the
			 * merge added get their defaults too */
			if (strcmp(part, "PodSpec") == 0 && default_case(part, ex) != 0)
				rc = -1;
			ok = rc == 0 && modified == json_is_true(json_object_get(c, "modified")) &&
			     (strcmp(part, "EnvVar") == 0 || sem_equal(ex, want));
		}
		if (!ok) {
			char *got = json_dumps(ex, JSON_COMPACT | JSON_SORT_KEYS);

			fprintf(stderr, "cvo merge case %s \"%s\": rc %d modified %d, got %s\n", part, name, rc, modified,
				got != NULL ? got : "?");
			free(got);
			failed++;
		}
		json_decref(ex);
		json_decref(in);
		json_decref(want);
		json_decref(input);
	}
	CU_ASSERT_EQUAL(failed, 0);
	json_decref(doc);
}

/*
 * lib/resourcebuilder updatePodSpecWithProxy (podspec_test.go
 * TestUpdatePodSpecWithProxy, tests/data/cvo-merge/cases.json
 * "proxy_cases") on a Deployment carrying the pod spec, and its error for a
 * container the annotation names that the pod does not have.
 */
static void test_update__cvo_proxy_injection(void)
{
	char *path = al_path_join(al_test_source_dir(), "tests/data/cvo-merge/cases.json");
	json_t *doc = NULL, *c, *n;
	size_t i, j, ran = 0;

	CU_ASSERT_EQUAL_FATAL(path != NULL && al_json_load_file(&doc, path, 1 << 20) == 0, 1);
	free(path);
	json_array_foreach(json_object_get(doc, "proxy_cases"), i, c)
	{
		json_t *obj = json_pack("{s:{s:{s:O}}}", "spec", "template", "spec", json_object_get(c, "input"));
		json_t *proxy = json_pack("{s:{s:O,s:O,s:O}}", "status", "httpProxy", json_object_get(c, "httpProxy"),
					  "httpsProxy", json_object_get(c, "httpsProxy"), "noProxy",
					  json_object_get(c, "noProxy"));
		al_buf names = AL_BUF_INIT(1024);

		json_array_foreach(json_object_get(c, "containerNames"), j, n)
		{
			CU_ASSERT_EQUAL(al_buf_printf(&names, "%s%s", j > 0 ? "," : "", json_string_value(n)), 0);
		}
		CU_ASSERT_EQUAL(al_update_inject_proxy(obj, al_buf_cstr(&names), proxy), 0);
		if (!json_equal(json_object_get(json_object_get(json_object_get(obj, "spec"), "template"), "spec"),
				json_object_get(c, "expected")))
			fprintf(stderr, "proxy case \"%s\" differs\n", al_json_str(c, "name"));
		CU_ASSERT_TRUE(json_equal(json_object_get(json_object_get(json_object_get(obj, "spec"), "template"), "spec"),
					  json_object_get(c, "expected")));
		al_buf_free(&names);
		json_decref(obj);
		json_decref(proxy);
		ran++;
	}
	CU_ASSERT_EQUAL(ran, 2);
	json_decref(doc);
	{
		json_t *obj = json_loads("{\"metadata\":{\"annotations\":{\"config.openshift.io/inject-proxy\":\"c,gone\"}},"
					 "\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}}",
					 0, NULL);
		json_t *proxy = json_loads("{\"status\":{\"noProxy\":\"x\"}}", 0, NULL);

		CU_ASSERT_STRING_EQUAL(al_update_proxy_containers(obj, "apps", "DaemonSet"), "c,gone");
		CU_ASSERT_PTR_NULL(al_update_proxy_containers(obj, "", "Service"));
		CU_ASSERT_EQUAL(al_update_inject_proxy(obj, "c,gone", proxy), AL_EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "requested injection for non-existent container: \"gone\""));
		/* without proxy values nothing is looked for */
		CU_ASSERT_EQUAL(al_update_inject_proxy(obj, "gone", NULL), 0);
		al_error_clear();
		json_decref(obj);
		json_decref(proxy);
	}
}

/*
 * lib/resourcebuilder modifyDeployment's rule for the CVO's own Deployment:
 * updatePodSpecWithInternalLoadBalancerKubeService (podspec_test.go
 * TestUpdatePodSpecWithInternalLoadBalancerKubeService, cases.json
 * "lb_cases"), an existing variable replaced in place, and the host and
 * port taken from apiServerInternalURL as url.Parse and net.SplitHostPort
 * give them.
 */
static void test_update__cvo_internal_load_balancer(void)
{
	char *path = al_path_join(al_test_source_dir(), "tests/data/cvo-merge/cases.json");
	json_t *doc = NULL, *c, *n;
	size_t i, j, ran = 0;
	static const struct {
		const char *url, *host, *port;
		int rc;
	} urls[] = {
	    {"https://api-int.example.com:6443", "api-int.example.com", "6443", 0},
	    {"https://api-int.example.com", "api-int.example.com", "", 0},
	    {"https://u:p@10.0.0.1:6443/x", "10.0.0.1", "6443", 0},
	    {"https://[fd00::1]:6443", "fd00::1", "6443", 0},
	    {"https://[fd00::1]", "[fd00::1]", "", 0},
	    {"", "", "", 0},
	    {"https://a:b:c", "", "", AL_EINVAL},
	};
	char host[64], port[16];

	CU_ASSERT_EQUAL_FATAL(path != NULL && al_json_load_file(&doc, path, 1 << 20) == 0, 1);
	free(path);
	json_array_foreach(json_object_get(doc, "lb_cases"), i, c)
	{
		json_t *spec = json_deep_copy(json_object_get(c, "input"));
		al_buf names = AL_BUF_INIT(1024);

		json_array_foreach(json_object_get(c, "containerNames"), j, n)
		{
			CU_ASSERT_EQUAL(al_buf_printf(&names, "%s%s", j > 0 ? "," : "", json_string_value(n)), 0);
		}
		CU_ASSERT_EQUAL(al_update_kube_service(spec, al_buf_cstr(&names), al_json_str(c, "lbHost"),
						       al_json_str(c, "lbPort")),
				0);
		if (!json_equal(spec, json_object_get(c, "expected")))
			fprintf(stderr, "lb case \"%s\" differs\n", al_json_str(c, "name"));
		CU_ASSERT_TRUE(json_equal(spec, json_object_get(c, "expected")));
		al_buf_free(&names);
		json_decref(spec);
		ran++;
	}
	CU_ASSERT_EQUAL(ran, 3);
	json_decref(doc);
	{
		json_t *spec = json_loads("{\"containers\":[{\"name\":\"cluster-version-operator\",\"env\":[{\"name\":"
					  "\"KUBERNETES_SERVICE_HOST\",\"value\":\"127.0.0.1\"},{\"name\":\"A\"}]}]}",
					  0, NULL);
		json_t *obj = json_loads("{\"metadata\":{\"namespace\":\"openshift-cluster-version\",\"name\":"
					 "\"cluster-version-operator\"}}",
					 0, NULL);

		CU_ASSERT_EQUAL(al_update_kube_service(spec, "cluster-version-operator", "lb", "6443"), 0);
		CU_ASSERT_STRING_EQUAL(al_json_str(json_array_get(json_object_get(json_array_get(json_object_get(spec, "containers"), 0), "env"), 0), "value"), "lb");
		CU_ASSERT_STRING_EQUAL(al_json_str(json_array_get(json_object_get(json_array_get(json_object_get(spec, "containers"), 0), "env"), 2), "name"), "KUBERNETES_SERVICE_PORT");
		CU_ASSERT_EQUAL(al_update_kube_service(spec, "other", "lb", ""), AL_EINVAL);
		CU_ASSERT_EQUAL(al_update_is_cvo_deployment(obj, "apps", "Deployment"), 1);
		CU_ASSERT_EQUAL(al_update_is_cvo_deployment(obj, "apps", "DaemonSet"), 0);
		json_decref(spec);
		json_decref(obj);
	}
	for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		int rc = al_update_split_lb_url(urls[i].url, host, sizeof(host), port, sizeof(port));

		CU_ASSERT_EQUAL(rc, urls[i].rc);
		if (rc == 0 && (strcmp(host, urls[i].host) != 0 || strcmp(port, urls[i].port) != 0)) {
			fprintf(stderr, "url %s: '%s' '%s'\n", urls[i].url, host, port);
			CU_FAIL("host and port");
		}
	}
	al_error_clear();
}

/* The architecture of the graph the CVO asks for on this ClusterVersion
 * (JSON) with the target payload multi or not, on a cluster of arch. */
static const char *graph_arch(const char *cv, int target_multi, const char *arch, int *migrating)
{
	json_t *j = json_loads(cv, 0, NULL);
	const char *a = al_update_graph_arch(j, target_multi, arch, migrating);

	json_decref(j);
	return a;
}

/*
 * pkg/cvo/availableupdates.go getDesiredArchitecture /
 * getCurrentArchitecture and pkg/cincinnati GetUpdates (cincinnati_test.go
 * TestGetUpdates: "one update available" queries the cluster's arch,
 * "single to multi arch, only current version available" arch=multi
 * with currentArch single, "multi to multi arch, one update available"
 * arch=multi), pkg/payload loadReleaseMetadata (release-metadata's
 * release.openshift.io/architecture "multi").
 */
static void test_update__cvo_graph_architecture(void)
{
	static const char *const arches[] = {"amd64", "arm64", "ppc64le", "s390x"};
	const char *m = "{\"kind\": \"cincinnati-metadata-v0\", \"version\": \"4.16.1\", \"metadata\": "
			"{\"release.openshift.io/architecture\": \"multi\"}}";
	const char *single = "{\"kind\": \"cincinnati-metadata-v0\", \"version\": \"4.16.1\", \"metadata\": {}}";
	size_t i;
	int mig = -1;

	/* a single-architecture cluster asks for its own architecture */
	for (i = 0; i < sizeof(arches) / sizeof(arches[0]); i++) {
		CU_ASSERT_STRING_EQUAL(graph_arch("{\"spec\": {}, \"status\": {\"desired\": {\"version\": \"4.16.0\"}}}", 0,
						  arches[i], &mig),
				       arches[i]);
		CU_ASSERT_EQUAL(mig, 0);
	}
	/* single to multi: spec.desiredUpdate.architecture Multi */
	CU_ASSERT_STRING_EQUAL(graph_arch("{\"spec\": {\"desiredUpdate\": {\"architecture\": \"Multi\", \"version\": "
					  "\"4.16.0\"}}, \"status\": {\"desired\": {\"version\": \"4.16.0\"}}}",
					  0, "arm64", &mig),
			       "multi");
	CU_ASSERT_EQUAL(mig, 1);
	/* ... or a multi payload asked for by digest */
	CU_ASSERT_STRING_EQUAL(graph_arch("{\"spec\": {}, \"status\": {\"desired\": {\"version\": \"4.16.0\"}}}", 1, "amd64", &mig),
			       "multi");
	CU_ASSERT_EQUAL(mig, 1);
	/* multi to multi: the running payload is multi (status.desired) */
	CU_ASSERT_STRING_EQUAL(graph_arch("{\"spec\": {}, \"status\": {\"desired\": {\"version\": \"4.16.0\", "
					  "\"architecture\": \"Multi\"}}}",
					  0, "amd64", &mig),
			       "multi");
	CU_ASSERT_EQUAL(mig, 0);
	CU_ASSERT_STRING_EQUAL(graph_arch("{\"spec\": {}, \"status\": {\"desired\": {\"version\": \"4.16.0\", "
					  "\"architecture\": \"Multi\"}}}",
					  1, "s390x", &mig),
			       "multi");
	CU_ASSERT_EQUAL(mig, 0);
	/* the payload's own word for it */
	CU_ASSERT_EQUAL(al_update_release_multi((const uint8_t *)m, strlen(m)), 1);
	CU_ASSERT_EQUAL(al_update_release_multi((const uint8_t *)single, strlen(single)), 0);
	CU_ASSERT_EQUAL(al_update_release_multi((const uint8_t *)"{", 1), 0);
	CU_ASSERT_EQUAL(al_update_release_multi(NULL, 0), 0);
}

/* tests/data/cvo-gates/payloadcapabilitytest/<t>/<side>/file_N.yaml (JSON)
 * as a graph, each document given the profile annotation the CVO's test
 * does not need; caps NULL: no capability filter. NULL when the directory
 * has no file (the CVO's "no update manifests" cases). */
static al_update_graph *cap_graph(const char *t, const char *side, const char *const *caps, size_t ncaps)
{
	al_update_file files[8];
	char *texts[8] = {0}, names[8][16];
	al_update_load_opts o = opts_default();
	al_update_graph *g = NULL;
	size_t n = 0, i;

	for (i = 1; i <= 8; i++) {
		char rel[128], *path;
		al_buf b = AL_BUF_INIT(1 << 16);
		json_t *j;

		snprintf(rel, sizeof(rel), "tests/data/cvo-gates/payloadcapabilitytest/%s/%s/file_%zu.yaml", t, side, i);
		path = al_path_join(al_test_source_dir(), rel);
		if (path == NULL || al_fs_read_file(path, &b) != 0) {
			al_error_clear();
			free(path);
			al_buf_free(&b);
			break;
		}
		free(path);
		j = json_loads(al_buf_cstr(&b), 0, NULL);
		al_buf_free(&b);
		json_object_set_new(json_object_get(json_object_get(j, "metadata"), "annotations"),
				    "include.release.openshift.io/self-managed-high-availability", json_string("true"));
		texts[n] = json_dumps(j, 0);
		json_decref(j);
		snprintf(names[n], sizeof(names[n]), "file_%zu.yaml", i);
		files[n] = file_of(names[n], texts[n] != NULL ? texts[n] : "");
		n++;
	}
	o.capabilities = caps;
	o.ncapabilities = ncaps;
	o.known_capabilities = caps;
	o.nknown_capabilities = ncaps;
	o.capabilities_known = caps != NULL;
	if (n > 0 && al_update_graph_build(&g, files, n, &o) != 0)
		g = NULL;
	for (i = 0; i < n; i++)
		free(texts[i]);
	return g;
}

/* The new implicitly enabled capabilities as "a,b,c" (sorted input). */
static char *implicit_of(const char *t, const char *const *enabled, size_t nen)
{
	al_update_graph *next = cap_graph(t, "update", NULL, 0), *cur = cap_graph(t, "current", enabled, nen);
	al_update_graph empty;
	char **l = NULL, *out;
	size_t n = 0, i, j;
	al_buf b = AL_BUF_INIT(4096);

	memset(&empty, 0, sizeof(empty));
	CU_ASSERT_EQUAL(al_update_implicit_capabilities(next != NULL ? next : &empty, cur != NULL ? cur : &empty,
							enabled, nen, &l, &n),
			0);
	/* sort for comparison */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (strcmp(l[i], l[j]) > 0) {
				char *x = l[i];
				l[i] = l[j];
				l[j] = x;
			}
	for (i = 0; i < n; i++) {
		al_buf_printf(&b, "%s%s", i > 0 ? "," : "", l[i]);
		free(l[i]);
	}
	free(l);
	out = strdup(al_buf_cstr(&b));
	al_buf_free(&b);
	al_update_graph_free(next);
	al_update_graph_free(cur);
	return out;
}

static void check_implicit(const char *t, const char *const *enabled, size_t nen, const char *want)
{
	char *got = implicit_of(t, enabled, nen);

	if (got != NULL && strcmp(got, want) != 0)
		fprintf(stderr, "implicit %s: got '%s', want '%s'\n", t, got, want);
	CU_ASSERT_TRUE(got != NULL && strcmp(got, want) == 0);
	free(got);
}

/* pkg/payload TestGetImplicitlyEnabledCapabilities, on its testdata. The
 * CVO returns the union with the already implicitly enabled ones; airlock
 * counts those as enabled (status.enabledCapabilities) and returns the new
 * ones. ("duplicate manifests", test10, is left out: a payload with the
 * same object twice is refused before this.) */
static void test_update__cvo_implicitly_enabled_capabilities(void)
{
	static const char *const c1[] = {"cap1"}, *const c12[] = {"cap1", "cap2"}, *const c2[] = {"cap2"};
	const char *c7[30];
	size_t n7 = 0, i;
	char *owned[24];

	check_implicit("test1", c1, 1, "cap2");    /* basic (and with unknown cap) */
	check_implicit("test2", NULL, 0, "");      /* different manifest */
	check_implicit("test3", c2, 1, "");        /* current manifest not enabled */
	check_implicit("test4", c12, 2, "");       /* new cap already enabled */
	check_implicit("test5", c12, 2, "");       /* already implicitly enabled */
	check_implicit("test6", c1, 1, "cap2");    /* only add cap once */
	check_implicit("test8", c1, 1, "");        /* no update manifests */
	check_implicit("test9", c1, 1, "");        /* no current manifests */
	/* complex: enabled cap1..cap24, implicitly enabled before cap000 and
	 * cap111..cap114 */
	for (i = 0; i < 24; i++) {
		owned[i] = al_sprintf("cap%zu", i + 1);
		c7[n7++] = owned[i];
	}
	c7[n7++] = "cap000";
	c7[n7++] = "cap111";
	c7[n7++] = "cap112";
	c7[n7++] = "cap113";
	c7[n7++] = "cap114";
	check_implicit("test7", c7, n7, "cap1110,cap1111,cap1112,cap1113,cap1114,cap1115,cap1116,cap115,cap116,cap117,cap118,cap119");
	for (i = 0; i < 24; i++)
		free(owned[i]);
}

/* pkg/payload/task.go reasonForPayloadSyncError and the ClusterOperator
 * reasons, from the messages airlock's failures carry. */
static void test_update__cvo_failure_reasons(void)
{
	CU_ASSERT_STRING_EQUAL(al_update_failure_reason(AL_EAUTH, "PATCH '/api/v1/x': 403 forbidden"),
			       "UpdatePayloadResourceForbidden");
	CU_ASSERT_STRING_EQUAL(al_update_failure_reason(AL_EAUTH, "GET '/api/v1/x': 401 Unauthorized"),
			       "UpdatePayloadClusterUnauthorized");
	CU_ASSERT_STRING_EQUAL(al_update_failure_reason(AL_EPROTO, "PATCH '/x': 422 invalid"), "UpdatePayloadResourceInvalid");
	CU_ASSERT_STRING_EQUAL(al_update_failure_reason(AL_ETIMEOUT, "sync deadline reached after 3 attempt(s); last answer: "
								    "PATCH '/x': deadline reached after 3 attempts, last: 409 c"),
			       "UpdatePayloadFailed");
	CU_ASSERT_STRING_EQUAL(al_update_failure_reason(AL_EEXIST, "POST '/x': 409 Conflict"), "UpdatePayloadResourceConflict");
	CU_ASSERT_STRING_EQUAL(al_update_failure_reason(AL_EPROTO, "PATCH '/x': 500 boom"), "UpdatePayloadClusterError");
	CU_ASSERT_STRING_EQUAL(al_update_failure_reason(AL_EPROTO, "PATCH '/x': 503 down"), "UpdatePayloadClusterDown");
	CU_ASSERT_STRING_EQUAL(al_update_failure_reason(AL_EPROTO, "PATCH '/x': 429 slow"), "UpdatePayloadClusterOverloaded");
	CU_ASSERT_STRING_EQUAL(al_update_failure_reason(AL_ENOTFOUND, "GET '/x': 404 Not Found"), "UpdatePayloadResourceNotFound");
	CU_ASSERT_STRING_EQUAL(al_update_failure_reason(AL_ETIMEOUT, "cluster operator 'etcd' is not available "
								    "(ClusterOperatorNotAvailable): Available=False"),
			       "ClusterOperatorNotAvailable");
	CU_ASSERT_STRING_EQUAL(al_update_failure_reason(AL_ETIMEOUT, "deployment ns/d is Progressing=False: "
								    "ProgressDeadlineExceeded: x (WorkloadNotProgressing)"),
			       "WorkloadNotProgressing");
	CU_ASSERT_STRING_EQUAL(al_update_failure_reason(AL_EINVAL, "invalid delete annotation"), "UpdatePayloadFailed");
}

/* A real payload's cluster-update-keys ConfigMap names metadata.namespace
 * twice; the CVO's decoder (sigs.k8s.io/yaml, not strict) keeps the later
 * one, and so must the loader (the strict one refuses it). */
static void test_update__real_manifest_with_a_repeated_key_loads(void)
{
	char *path = al_path_join(al_test_source_dir(), "tests/data/redhat/cluster-update-keys-configmap.yaml");
	al_buf b = AL_BUF_INIT(1 << 20);
	al_update_load_opts o = opts_default();
	al_update_graph *g = NULL;
	al_update_file f;

	if (path == NULL || al_fs_read_file(path, &b) != 0) {
		CU_FAIL("cannot read tests/data/redhat/cluster-update-keys-configmap.yaml");
		goto out;
	}
	f = file_of("0000_90_cluster-update-keys_configmap.yaml", al_buf_cstr(&b));
	CU_ASSERT_EQUAL(al_update_graph_build(&g, &f, 1, &o), 0);
	if (g != NULL) {
		CU_ASSERT_EQUAL(g->ntasks, 1);
		if (g->ntasks == 1) {
			CU_ASSERT_STRING_EQUAL(g->tasks[0].name, "release-verification");
			CU_ASSERT_STRING_EQUAL(g->tasks[0].ns, "openshift-config-managed");
		}
	}
out:
	al_update_graph_free(g);
	al_buf_free(&b);
	free(path);
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
	{"test_update__library_go_include_feature_set_default_gets_only_default", test_update__library_go_include_feature_set_default_gets_only_default},
	{"test_update__library_go_include_feature_gates_and_major_version", test_update__library_go_include_feature_gates_and_major_version},
	{"test_update__library_go_include_disabled_capability_skipped", test_update__library_go_include_disabled_capability_skipped},
	{"test_update__cvo_capabilities_baseline_additional_and_implicit", test_update__cvo_capabilities_baseline_additional_and_implicit},
	{"test_update__library_go_duplicate_resource_refused_naming_both_files", test_update__library_go_duplicate_resource_refused_naming_both_files},
	{"test_update__cvo_by_number_and_component_unmatched_names_serial_in_place", test_update__cvo_by_number_and_component_unmatched_names_serial_in_place},
	{"test_update__cvo_split_on_jobs_is_a_barrier", test_update__cvo_split_on_jobs_is_a_barrier},
	{"test_update__cvo_manifests_dir_first_rendered", test_update__cvo_manifests_dir_first_rendered},
	{"test_update__semver_order", test_update__semver_order},
	{"test_update__preconditions_as_the_cvo", test_update__preconditions_as_the_cvo},
	{"test_update__cvo_admin_acks", test_update__cvo_admin_acks},
	{"test_update__cvo_resourcemerge", test_update__cvo_resourcemerge},
	{"test_update__cvo_merge_cases", test_update__cvo_merge_cases},
	{"test_update__cvo_proxy_injection", test_update__cvo_proxy_injection},
	{"test_update__cvo_internal_load_balancer", test_update__cvo_internal_load_balancer},
	{"test_update__cvo_graph_architecture", test_update__cvo_graph_architecture},
	{"test_update__cvo_failure_reasons", test_update__cvo_failure_reasons},
	{"test_update__cvo_implicitly_enabled_capabilities", test_update__cvo_implicitly_enabled_capabilities},
	{"test_update__real_manifest_with_a_repeated_key_loads", test_update__real_manifest_with_a_repeated_key_loads},
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return al_test_run("update", tests);
}

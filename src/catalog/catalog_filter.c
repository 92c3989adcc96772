/* catalog_filter.c: selecting packages, channels and bundles from a catalog
 * as oc-mirror v2 does (its mirror filter), plus dependency closure. */
#include <stdlib.h>
#include <string.h>

#include "airlock/error.h"
#include "json_int.h"
#include "catalog_int.h"

#define LIST_MAX 20 /* names listed in "what exists" messages */
/* skipRange x entries per channel (docs/operators.md, Bounds) */
#define SKIPRANGE_WORK_MAX ((uint64_t)100000000)

struct fchan {
	int kept;
	unsigned char *keep;
	long *extra; /* extra[x]: entry that gains "skips: [x]", or -1 */
};

struct fpkg {
	int sel;
	int by_dep; /* selected only to satisfy a dependency */
	const char *defch;
	struct fchan *ch;
	unsigned char *bkeep;
};

struct fstate {
	const al_catalog *in;
	struct fpkg *p;
	json_t *unresolved; /* strings */
};

static void state_clear(struct fstate *st)
{
	size_t i, j;

	json_decref(st->unresolved);
	if (st->p == NULL)
		return;
	for (i = 0; i < st->in->npackages; i++) {
		struct fpkg *fp = &st->p[i];

		for (j = 0; fp->ch != NULL && j < st->in->packages[i].nchannels;
		     j++) {
			free(fp->ch[j].keep);
			free(fp->ch[j].extra);
		}
		free(fp->ch);
		free(fp->bkeep);
	}
	free(st->p);
}

static int state_init(struct fstate *st, const al_catalog *in)
{
	size_t i, j;

	memset(st, 0, sizeof(*st));
	st->in = in;
	st->p = calloc(in->npackages + 1, sizeof(*st->p));
	st->unresolved = json_array();
	if (st->p == NULL || st->unresolved == NULL)
		return al_error_oom();
	for (i = 0; i < in->npackages; i++) {
		const struct cat_package *p = &in->packages[i];
		struct fpkg *fp = &st->p[i];

		fp->defch = p->default_channel;
		fp->ch = calloc(p->nchannels + 1, sizeof(*fp->ch));
		fp->bkeep = calloc(p->nbundles + 1, 1);
		if (fp->ch == NULL || fp->bkeep == NULL)
			return al_error_oom();
		for (j = 0; j < p->nchannels; j++) {
			size_t n = p->channels[j].nentries, k;

			fp->ch[j].keep = calloc(n + 1, 1);
			fp->ch[j].extra = calloc(n + 1, sizeof(long));
			if (fp->ch[j].keep == NULL || fp->ch[j].extra == NULL)
				return al_error_oom();
			for (k = 0; k < n; k++)
				fp->ch[j].extra[k] = -1;
		}
	}
	return 0;
}

static const cat_semver *entry_ver(const struct cat_package *p,
                                   const struct cat_channel *ch, size_t e)
{
	return &p->bundles[ch->entries[e].bundle].ver;
}

/* Call fn for every entry chain node e covers (itself, its skips, the
 * entries in its skipRange), each once per call (mark is scratch). */
static void for_covered(const struct cat_package *p,
                        const struct cat_channel *ch, size_t e,
                        unsigned char *mark, void (*fn)(void *ud, size_t x),
                        void *ud)
{
	const struct cat_entry *en = &ch->entries[e];
	json_t *sv;
	size_t k;

	/* the common case (no skipRange) visits a handful of entries */
	if (!mark[e]) {
		mark[e] = 1;
		fn(ud, e);
	}
	json_array_foreach(en->skips, k, sv)
	{
		long x = cat_find_entry(ch, json_string_value(sv));

		if (x >= 0 && !mark[x]) {
			mark[x] = 1;
			fn(ud, (size_t)x);
		}
	}
	if (en->has_range) {
		for (k = 0; k < ch->nentries; k++) {
			if (!mark[k] &&
			    cat_range_match(&en->range, entry_ver(p, ch, k))) {
				mark[k] = 1;
				fn(ud, k);
			}
		}
	}
	/* clear the marks again: the same scratch serves the next node */
	mark[e] = 0;
	json_array_foreach(en->skips, k, sv)
	{
		long x = cat_find_entry(ch, json_string_value(sv));

		if (x >= 0)
			mark[x] = 0;
	}
	if (en->has_range) {
		for (k = 0; k < ch->nentries; k++)
			mark[k] = 0;
	}
}

struct count_ctx {
	const unsigned char *want;
	unsigned char *seen;
	size_t count;
};

static void count_cb(void *ud, size_t x)
{
	struct count_ctx *cc = ud;

	if (cc->want[x] && !cc->seen[x]) {
		cc->seen[x] = 1;
		cc->count++;
	}
}

struct keep_ctx {
	const unsigned char *want;
	struct fchan *fc;
	size_t node;
	int mark_extra; /* second pass: record skipRange-only edges */
	const unsigned char *reached;
};

static void keep_cb(void *ud, size_t x)
{
	struct keep_ctx *kc = ud;

	if (!kc->want[x] && x != kc->node)
		return;
	if (!kc->mark_extra) {
		kc->fc->keep[x] = 1;
		return;
	}
	if (x != kc->node && !kc->reached[x] && kc->fc->extra[x] < 0)
		kc->fc->extra[x] = (long)kc->node;
}

/*
 * keep := the smallest piece of the channel's replaces chain that holds
 * every wanted entry it can reach, and the wanted entries themselves:
 * the mirror filter's channel.filterByVersionRange, extended to
 * skipRange. Walking the replaces chain from the head, count[k] is the
 * number of wanted entries covered (itself, its skips, its skipRange) by
 * chain[k] or anything below it, each counted once; the new head is the
 * lowest chain entry with the top count, the tail the first with 0. A
 * wanted entry reached only through a skipRange is recorded in extra so
 * that the output gives it an explicit skips edge and the channel keeps
 * one head.
 */
static int select_connected(const struct cat_package *p,
                            const struct cat_channel *ch,
                            const unsigned char *want, struct fchan *fc)
{
	size_t n = ch->nentries, len = 0, k, x, head = 0, tail;
	size_t *chain = calloc(n + 1, sizeof(*chain));
	size_t *count = calloc(n + 1, sizeof(*count));
	unsigned char *seen = calloc(n + 1, 1), *onchain = calloc(n + 1, 1);
	unsigned char *mark = calloc(n + 1, 1), *reached = calloc(n + 1, 1);
	long cur = ch->head, maxc = -1;
	struct count_ctx cc;
	struct keep_ctx kc;
	int rc = 0;

	if (chain == NULL || count == NULL || seen == NULL || onchain == NULL ||
	    mark == NULL || reached == NULL) {
		rc = al_error_oom();
		goto out;
	}
	/* each skipRange is checked against every entry, three times: bound
	 * the work a hostile catalog can ask for */
	for (k = 0, x = 0; k < n; k++)
		x += ch->entries[k].has_range != 0;
	if (x > 0 && (uint64_t)x * n > SKIPRANGE_WORK_MAX) {
		rc =
		    al_error_set(AL_ELIMIT,
		                 "package '%s' channel '%s': %zu skipRanges "
		                 "over %zu entries is more than airlock checks "
		                 "(%llu)",
		                 p->name, ch->name, x, n,
		                 (unsigned long long)SKIPRANGE_WORK_MAX);
		goto out;
	}
	while (cur >= 0 && !onchain[cur]) {
		const char *r = ch->entries[cur].replaces;

		onchain[cur] = 1;
		chain[len++] = (size_t)cur;
		cur = r != NULL ? cat_find_entry(ch, r) : -1;
	}
	cc.want = want;
	cc.seen = seen;
	cc.count = 0;
	for (k = len; k-- > 0;) {
		for_covered(p, ch, chain[k], mark, count_cb, &cc);
		count[k] = cc.count;
	}
	tail = len;
	for (k = 0; k < len; k++) {
		if ((long)count[k] >= maxc) {
			head = k;
			maxc = (long)count[k];
		}
		if (count[k] == 0) {
			tail = k;
			break;
		}
	}
	memset(fc->keep, 0, n);
	for (x = 0; x < n; x++)
		fc->extra[x] = -1;
	kc.want = want;
	kc.fc = fc;
	kc.mark_extra = 0;
	kc.reached = reached;
	for (k = head; k < tail; k++) {
		kc.node = chain[k];
		for_covered(p, ch, chain[k], mark, keep_cb, &kc);
	}
	/* entries kept through a skipRange alone need an explicit edge */
	for (k = 0; k < n; k++) {
		const struct cat_entry *en = &ch->entries[k];
		json_t *sv;
		size_t j;
		long t;

		if (!fc->keep[k])
			continue;
		if (en->replaces != NULL &&
		    (t = cat_find_entry(ch, en->replaces)) >= 0)
			reached[t] = 1;
		json_array_foreach(en->skips, j, sv)
		{
			if ((t = cat_find_entry(ch, json_string_value(sv))) >=
			    0)
				reached[t] = 1;
		}
	}
	if (head < tail)
		reached[chain[head]] = 1;
	kc.mark_extra = 1;
	for (k = head; k < tail; k++) {
		kc.node = chain[k];
		for_covered(p, ch, chain[k], mark, keep_cb, &kc);
	}
out:
	free(chain);
	free(count);
	free(seen);
	free(onchain);
	free(mark);
	free(reached);
	return rc;
}

static size_t count_keep(const struct fchan *fc, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += fc->keep[i] != 0;
	return c;
}

static void set_bundles(const struct cat_package *p, struct fpkg *fp)
{
	size_t j, k;

	memset(fp->bkeep, 0, p->nbundles);
	for (j = 0; j < p->nchannels; j++) {
		if (!fp->ch[j].kept)
			continue;
		for (k = 0; k < p->channels[j].nentries; k++) {
			if (fp->ch[j].keep[k])
				fp->bkeep[p->channels[j].entries[k].bundle] = 1;
		}
	}
}

/* "a, b, c" (at most LIST_MAX, then "..."). Caller frees. */
static char *list_channels(const struct cat_package *p)
{
	al_buf b = AL_BUF_INIT(64 * AL_KIB);
	size_t i;

	for (i = 0; i < p->nchannels && i < LIST_MAX; i++)
		(void)al_buf_printf(&b, "%s%s", i ? ", " : "",
		                    p->channels[i].name);
	if (p->nchannels > LIST_MAX)
		(void)al_buf_puts(&b, ", ...");
	return al_buf_detach(&b, NULL);
}

static char *list_versions(const struct cat_package *p,
                           const struct cat_channel *ch)
{
	al_buf b = AL_BUF_INIT(64 * AL_KIB);
	size_t i;

	for (i = 0; i < ch->nentries && i < LIST_MAX; i++)
		(void)al_buf_printf(&b, "%s%s", i ? ", " : "",
		                    p->bundles[ch->entries[i].bundle].version);
	if (ch->nentries > LIST_MAX)
		(void)al_buf_puts(&b, ", ...");
	return al_buf_detach(&b, NULL);
}

static char *list_packages(const al_catalog *c)
{
	al_buf b = AL_BUF_INIT(64 * AL_KIB);
	size_t i;

	for (i = 0; i < c->npackages && i < LIST_MAX; i++)
		(void)al_buf_printf(&b, "%s%s", i ? ", " : "",
		                    c->packages[i].name);
	if (c->npackages > LIST_MAX)
		(void)al_buf_puts(&b, ", ...");
	if (c->npackages == 0)
		(void)al_buf_puts(&b, "(none)");
	return al_buf_detach(&b, NULL);
}

static int is_set(const char *s)
{
	return s != NULL && s[0] != '\0';
}

/* One channel by a version range. explicit: the configuration names the
 * channel with this range (an empty result is then an error). */
static int by_range(const struct cat_package *p, const struct cat_channel *ch,
                    struct fchan *fc, const char *min, const char *max,
                    int is_default, int explicit)
{
	unsigned char *want = NULL;
	cat_range r;
	size_t k;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	if ((rc = cat_range_minmax(&r, min, max)) == AL_ENOMEM)
		return rc;
	if (rc < 0)
		return al_error_set(
		    AL_EINVAL,
		    "package '%s' channel '%s': minVersion '%s' "
		    "or maxVersion '%s' is not a version",
		    p->name, ch->name, min ? min : "", max ? max : "");
	want = calloc(ch->nentries + 1, 1);
	if (want == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (k = 0; k < ch->nentries; k++)
		want[k] =
		    (unsigned char)cat_range_match(&r, entry_ver(p, ch, k));
	if (is_set(min) && is_set(max) && strcmp(min, max) == 0) {
		/* OCPBUGS-61497: min == max selects that version only */
		memcpy(fc->keep, want, ch->nentries);
	} else if ((rc = select_connected(p, ch, want, fc)) < 0) {
		goto out;
	}
	if (count_keep(fc, ch->nentries) == 0) {
		if (is_default || explicit) {
			char *vs = list_versions(p, ch);

			rc =
			    al_error_set(AL_ENOTFOUND,
			                 "package '%s' channel '%s': no bundle "
			                 "in version range >=%s <=%s; the "
			                 "channel has %s",
			                 p->name, ch->name, min ? min : "",
			                 max ? max : "", vs ? vs : "");
			free(vs);
			goto out;
		}
		fc->kept = 0;
	}
out:
	free(want);
	cat_range_clear(&r);
	return rc;
}

static int by_bundles(const struct cat_package *p, const struct cat_channel *ch,
                      struct fchan *fc, const al_catalog_package_filter *pf,
                      int is_default)
{
	size_t k, b;

	for (k = 0; k < ch->nentries; k++) {
		for (b = 0; b < pf->nbundles; b++) {
			if (strcmp(ch->entries[k].name, pf->bundles[b]) == 0)
				fc->keep[k] = 1;
		}
	}
	if (count_keep(fc, ch->nentries) == 0) {
		if (is_default)
			return al_error_set(
			    AL_ENOTFOUND,
			    "package '%s': none of the selected "
			    "bundles is in the default channel "
			    "'%s'",
			    p->name, ch->name);
		fc->kept = 0;
	}
	return 0;
}

static int check_config(const al_catalog_filter *f,
                        const al_catalog_package_filter *pf)
{
	int pkgrange = is_set(pf->min_version) || is_set(pf->max_version);
	size_t i, j;

	if (!is_set(pf->name))
		return al_error_set(AL_EINVAL, "a package has no name");
	/* oc-mirror's isInvalidFiltering and the mirror filter's checks */
	if (pf->nchannels > 0 && pkgrange)
		return al_error_set(AL_EINVAL,
		                    "package '%s': cannot use channels and "
		                    "package minVersion/maxVersion at the same "
		                    "time",
		                    pf->name);
	if (f->full && pkgrange)
		return al_error_set(AL_EINVAL,
		                    "package '%s': full: true cannot be mixed "
		                    "with minVersion/maxVersion",
		                    pf->name);
	if (f->full && pf->nbundles > 0)
		return al_error_set(AL_EINVAL,
		                    "package '%s': full: true cannot be mixed "
		                    "with bundles",
		                    pf->name);
	if (pf->nbundles > 0 && pkgrange)
		return al_error_set(
		    AL_EINVAL,
		    "package '%s': bundles cannot be mixed with "
		    "minVersion/maxVersion",
		    pf->name);
	for (i = 0; i < pf->nchannels; i++) {
		const al_catalog_channel_filter *cf = &pf->channels[i];
		int chrange =
		    is_set(cf->min_version) || is_set(cf->max_version);

		if (!is_set(cf->name))
			return al_error_set(
			    AL_EINVAL, "package '%s': a channel has no name",
			    pf->name);
		if (f->full && chrange)
			return al_error_set(AL_EINVAL,
			                    "package '%s' channel '%s': full: "
			                    "true cannot be mixed with "
			                    "minVersion/maxVersion",
			                    pf->name, cf->name);
		if (pf->nbundles > 0 && chrange)
			return al_error_set(
			    AL_EINVAL,
			    "package '%s' channel '%s': bundles "
			    "cannot be mixed with "
			    "minVersion/maxVersion",
			    pf->name, cf->name);
		for (j = 0; j < i; j++) {
			if (strcmp(pf->channels[j].name, cf->name) == 0)
				return al_error_set(
				    AL_EINVAL,
				    "package '%s': channel '%s' "
				    "given twice",
				    pf->name, cf->name);
		}
	}
	return 0;
}

/* Select package p (index pi) by its configuration pf (NULL: the whole
 * catalog was asked for). */
static int select_package(struct fstate *st, size_t pi,
                          const al_catalog_package_filter *pf, int full)
{
	const struct cat_package *p = &st->in->packages[pi];
	struct fpkg *fp = &st->p[pi];
	size_t j, k;
	int rc;

	fp->sel = 1;
	for (j = 0; j < p->nchannels; j++)
		fp->ch[j].kept = pf == NULL || pf->nchannels == 0;
	for (j = 0; pf != NULL && j < pf->nchannels; j++) {
		long c = cat_find_channel(p, pf->channels[j].name);

		if (c < 0) {
			char *cs = list_channels(p);

			rc = al_error_set(
			    AL_ENOTFOUND,
			    "package '%s': channel '%s' not found; "
			    "the package has %s",
			    p->name, pf->channels[j].name, cs ? cs : "");
			free(cs);
			return rc;
		}
		fp->ch[c].kept = 1;
	}
	/* the mirror filter's setDefaultChannel */
	if (pf != NULL && is_set(pf->default_channel)) {
		long c = cat_find_channel(p, pf->default_channel);

		if (c < 0 || !fp->ch[c].kept)
			return al_error_set(
			    AL_EINVAL,
			    "package '%s': defaultChannel '%s' "
			    "is not among the selected channels",
			    p->name, pf->default_channel);
		fp->defch = p->channels[c].name;
	} else if (is_set(p->default_channel) &&
	           !fp->ch[cat_find_channel(p, p->default_channel)].kept) {
		return al_error_set(AL_EINVAL,
		                    "package '%s': the default channel '%s' "
		                    "was filtered out; name a defaultChannel "
		                    "for this package",
		                    p->name, p->default_channel);
	}
	if (pf != NULL && pf->nbundles > 0) {
		for (k = 0; k < pf->nbundles; k++) {
			if (cat_find_bundle(p, pf->bundles[k]) < 0)
				return al_error_set(
				    AL_ENOTFOUND,
				    "package '%s': bundle '%s' not "
				    "found",
				    p->name, pf->bundles[k]);
		}
	}
	for (j = 0; j < p->nchannels; j++) {
		const struct cat_channel *ch = &p->channels[j];
		struct fchan *fc = &fp->ch[j];
		const char *min = NULL, *max = NULL;
		int is_default = strcmp(ch->name, fp->defch) == 0;
		int explicit = 0;

		if (!fc->kept)
			continue;
		for (k = 0; pf != NULL && k < pf->nchannels; k++) {
			if (strcmp(pf->channels[k].name, ch->name) == 0) {
				min = pf->channels[k].min_version;
				max = pf->channels[k].max_version;
				explicit = is_set(min) || is_set(max);
			}
		}
		if (!is_set(min) && !is_set(max) && pf != NULL) {
			min = pf->min_version;
			max = pf->max_version;
		}
		if (pf != NULL && pf->nbundles > 0) {
			rc = by_bundles(p, ch, fc, pf, is_default);
		} else if (full) {
			memset(fc->keep, 1, ch->nentries);
			rc = 0;
		} else if (is_set(min) || is_set(max)) {
			rc =
			    by_range(p, ch, fc, min, max, is_default, explicit);
		} else {
			/* no range: the channel head (filterChannelHead) */
			fc->keep[ch->head] = 1;
			rc = 0;
		}
		if (rc < 0)
			return rc;
	}
	set_bundles(p, fp);
	return 0;
}

/* ---- dependencies ---------------------------------------------------- */

static int in_default(const struct cat_package *p, size_t b)
{
	long c;
	size_t k;

	if (!is_set(p->default_channel))
		return 0;
	c = cat_find_channel(p, p->default_channel);
	for (k = 0; c >= 0 && k < p->channels[c].nentries; k++) {
		if (p->channels[c].entries[k].bundle == (long)b)
			return 1;
	}
	return 0;
}

/* Is candidate (pi, b) better than the best so far (bpi, bb)? Default
 * channel first, then the higher version, then the package name. */
static int better(const al_catalog *c, size_t pi, size_t b, long bpi, long bb)
{
	const struct cat_package *p = &c->packages[pi], *q;
	int d1, d2, v;

	if (bpi < 0)
		return 1;
	q = &c->packages[bpi];
	d1 = in_default(p, b);
	d2 = in_default(q, (size_t)bb);
	if (d1 != d2)
		return d1 > d2;
	v = cat_semver_cmp(&p->bundles[b].ver, &q->bundles[bb].ver);
	if (v != 0)
		return v > 0;
	return strcmp(p->name, q->name) < 0;
}

/* Add bundle b of package pi to the selection: every channel that holds
 * it is kept (connected to what it already keeps). */
static int add_bundle(struct fstate *st, size_t pi, size_t b)
{
	const struct cat_package *p = &st->in->packages[pi];
	struct fpkg *fp = &st->p[pi];
	size_t j, k;
	int rc;

	if (!fp->sel) {
		fp->sel = 1;
		fp->by_dep = 1;
	}
	for (j = 0; j < p->nchannels; j++) {
		const struct cat_channel *ch = &p->channels[j];
		struct fchan *fc = &fp->ch[j];
		unsigned char *want;
		long e = -1;

		for (k = 0; k < ch->nentries; k++) {
			if (ch->entries[k].bundle == (long)b)
				e = (long)k;
		}
		if (e < 0)
			continue;
		want = calloc(ch->nentries + 1, 1);
		if (want == NULL)
			return al_error_oom();
		if (fc->kept)
			memcpy(want, fc->keep, ch->nentries);
		want[e] = 1;
		fc->kept = 1;
		rc = select_connected(p, ch, want, fc);
		/* an entry the chain cannot reach is still kept: finish then
		 * reports the channel if it is no longer valid */
		fc->keep[e] = 1;
		free(want);
		if (rc < 0)
			return rc;
	}
	set_bundles(p, fp);
	if (fp->by_dep) {
		long dc =
		    is_set(fp->defch) ? cat_find_channel(p, fp->defch) : -1;

		if (dc < 0 || !fp->ch[dc].kept) {
			for (j = 0; j < p->nchannels; j++) {
				if (fp->ch[j].kept) {
					fp->defch = p->channels[j].name;
					break;
				}
			}
		}
	}
	return 0;
}

/* Takes s (a message from al_sprintf, may be NULL on allocation
 * failure). */
static int note_unresolved(struct fstate *st, char *s)
{
	json_t *v;
	size_t i;
	int rc = 0;

	/* every pass sees the same gaps again: note each once */
	json_array_foreach(st->unresolved, i, v)
	{
		if (s != NULL && strcmp(json_string_value(v), s) == 0) {
			free(s);
			return 0;
		}
	}

	if (s == NULL ||
	    json_array_append_new(st->unresolved, json_string(s)) < 0)
		rc = al_error_oom();
	free(s);
	return rc;
}

static int gvk_eq(const struct cat_gvk *a, const struct cat_gvk *b)
{
	return strcmp(a->group, b->group) == 0 &&
	       strcmp(a->version, b->version) == 0 &&
	       strcmp(a->kind, b->kind) == 0;
}

/* One pass; *changed when a bundle was added. */
static int deps_pass(struct fstate *st, int *changed)
{
	const al_catalog *c = st->in;
	size_t pi, b, q, i, j;
	int rc;

	for (pi = 0; pi < c->npackages; pi++) {
		const struct cat_package *p = &c->packages[pi];

		for (b = 0; st->p[pi].sel && b < p->nbundles; b++) {
			const struct cat_bundle *bu = &p->bundles[b];

			if (!st->p[pi].bkeep[b])
				continue;
			for (q = 0; q < bu->npkgreqs; q++) {
				const struct cat_pkgreq *r = &bu->pkgreqs[q];
				long dp = cat_find_package(c, r->package);
				long best = -1;
				int ok = 0;

				for (i = 0;
				     dp >= 0 && i < c->packages[dp].nbundles;
				     i++) {
					const struct cat_bundle *cb =
					    &c->packages[dp].bundles[i];

					if (!cat_range_match(&r->range,
					                     &cb->ver))
						continue;
					if (st->p[dp].sel && st->p[dp].bkeep[i])
						ok = 1;
					if (better(c, (size_t)dp, i,
					           best < 0 ? -1 : dp, best))
						best = (long)i;
				}
				if (ok)
					continue;
				if (best < 0) {
					if ((rc = note_unresolved(
					         st, al_sprintf(
					                 "bundle '%s' requires "
					                 "package '%s' %s: not "
					                 "in this catalog",
					                 bu->name, r->package,
					                 r->range_text))) < 0)
						return rc;
					continue;
				}
				if ((rc = add_bundle(st, (size_t)dp,
				                     (size_t)best)) < 0)
					return rc;
				*changed = 1;
			}
			for (q = 0; q < bu->ngvkreqs; q++) {
				const struct cat_gvk *g = &bu->gvkreqs[q];
				long bp = -1, bb = -1;
				int ok = 0;

				for (i = 0; i < c->npackages && !ok; i++) {
					const struct cat_package *cp =
					    &c->packages[i];

					for (j = 0; j < cp->nbundles && !ok;
					     j++) {
						const struct cat_bundle *cb =
						    &cp->bundles[j];
						size_t k;

						for (k = 0; k < cb->ngvks;
						     k++) {
							if (!gvk_eq(
							        &cb->gvks[k],
							        g))
								continue;
							if (st->p[i].sel &&
							    st->p[i].bkeep[j])
								ok = 1;
							else if (better(c, i, j,
							                bp,
							                bb)) {
								bp = (long)i;
								bb = (long)j;
							}
							break;
						}
					}
				}
				if (ok)
					continue;
				if (bp < 0) {
					rc = note_unresolved(
					    st,
					    al_sprintf(
					        "bundle '%s' requires "
					        "API %s/%s %s: no bundle in "
					        "this catalog provides it",
					        bu->name, g->group, g->version,
					        g->kind));
					if (rc < 0)
						return rc;
					continue;
				}
				if ((rc = add_bundle(st, (size_t)bp,
				                     (size_t)bb)) < 0)
					return rc;
				*changed = 1;
			}
		}
	}
	return 0;
}

/* ---- output ------------------------------------------------------------ */

static int emit_channel(al_catalog *out, const struct cat_channel *ch,
                        const struct fchan *fc)
{
	json_t *obj = al_json_copy(ch->obj), *entries = json_array();
	json_t *src = json_object_get(ch->obj, "entries");
	size_t k, x;
	int rc = 0;

	if (obj == NULL || entries == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (k = 0; k < ch->nentries; k++) {
		json_t *e = json_array_get(src, k);
		json_t *ne = NULL;

		if (!fc->keep[k])
			continue;
		for (x = 0; x < ch->nentries; x++) {
			json_t *sk;

			if (fc->extra[x] != (long)k || !fc->keep[x])
				continue;
			/* an entry without the skips it gains would give the
			 * channel a second head: a failure here fails the
			 * channel */
			if (ne == NULL && (ne = json_deep_copy(e)) == NULL) {
				rc = al_error_oom();
				break;
			}
			sk = json_object_get(ne, "skips");
			if (sk == NULL) {
				sk = json_array();
				if (json_object_set_new(ne, "skips", sk) < 0) {
					rc = al_error_oom();
					break;
				}
			}
			if (json_array_append_new(
			        sk, json_string(ch->entries[x].name)) < 0) {
				rc = al_error_oom();
				break;
			}
		}
		if (rc == 0 &&
		    json_array_append(entries, ne != NULL ? ne : e) < 0)
			rc = al_error_oom();
		json_decref(ne);
		if (rc < 0)
			goto out;
	}
	if (json_object_set(obj, "entries", entries) < 0) {
		rc = al_error_oom();
		goto out;
	}
	rc = cat_add_object(out, obj, "filtered channel");
out:
	json_decref(obj);
	json_decref(entries);
	return rc;
}

static int emit_deprecations(al_catalog *out, const struct cat_package *p,
                             const struct fpkg *fp)
{
	json_t *obj, *entries, *e;
	size_t k;
	int rc = 0;

	if (p->deprecations == NULL)
		return 0;
	obj = al_json_copy(p->deprecations);
	entries = json_array();
	if (obj == NULL || entries == NULL) {
		rc = al_error_oom();
		goto out;
	}
	json_array_foreach(json_object_get(p->deprecations, "entries"), k, e)
	{
		json_t *r = json_object_get(e, "reference");
		const char *schema = al_json_str(r, "schema");
		const char *name = al_json_str(r, "name");
		int keep = 1;

		if (schema != NULL && strcmp(schema, "olm.bundle") == 0) {
			long b = name != NULL ? cat_find_bundle(p, name) : -1;

			keep = b >= 0 && fp->bkeep[b];
		} else if (schema != NULL &&
		           strcmp(schema, "olm.channel") == 0) {
			long c = name != NULL ? cat_find_channel(p, name) : -1;

			keep = c >= 0 && fp->ch[c].kept;
		}
		if (keep && json_array_append(entries, e) < 0) {
			rc = al_error_oom();
			goto out;
		}
	}
	if (json_array_size(entries) == 0)
		goto out;
	if (json_object_set(obj, "entries", entries) < 0) {
		rc = al_error_oom();
		goto out;
	}
	rc = cat_add_object(out, obj, "filtered deprecations");
out:
	json_decref(obj);
	json_decref(entries);
	return rc;
}

static int emit(al_catalog *out, const struct fstate *st)
{
	const al_catalog *in = st->in;
	size_t i, j;
	json_t *o;
	int rc;

	for (i = 0; i < in->npackages; i++) {
		const struct cat_package *p = &in->packages[i];
		const struct fpkg *fp = &st->p[i];
		json_t *po;

		if (!fp->sel)
			continue;
		po = al_json_copy(p->obj);
		if (po == NULL)
			return al_error_oom();
		if (is_set(fp->defch) &&
		    json_object_set_new(po, "defaultChannel",
		                        json_string(fp->defch)) < 0) {
			json_decref(po);
			return al_error_oom();
		}
		rc = cat_add_object(out, po, "filtered package");
		json_decref(po);
		if (rc < 0)
			return rc;
		for (j = 0; j < p->nchannels; j++) {
			if (fp->ch[j].kept &&
			    (rc = emit_channel(out, &p->channels[j],
			                       &fp->ch[j])) < 0)
				return rc;
		}
		for (j = 0; j < p->nbundles; j++) {
			if (fp->bkeep[j] &&
			    (rc = cat_add_object(out, p->bundles[j].obj,
			                         "bundle")) < 0)
				return rc;
		}
		json_array_foreach(p->others, j, o)
		{
			if ((rc = cat_add_object(out, o, "object")) < 0)
				return rc;
		}
		if ((rc = emit_deprecations(out, p, fp)) < 0)
			return rc;
	}
	json_array_foreach(in->global, j, o)
	{
		if ((rc = cat_add_object(out, o, "object")) < 0)
			return rc;
	}
	return 0;
}

int al_catalog_filter_apply(al_catalog **out, const al_catalog *in,
                            const al_catalog_filter *f)
{
	struct fstate st;
	al_catalog *res = NULL;
	size_t i, j, guard = 0;
	int rc, changed;

	memset(&st, 0, sizeof(st));
	if (out == NULL || in == NULL || f == NULL || !in->finished)
		return al_error_set(AL_EINVAL, "no catalog or filter");
	if ((rc = state_init(&st, in)) < 0)
		goto out;
	for (i = 0; i < f->npackages; i++) {
		if ((rc = check_config(f, &f->packages[i])) < 0)
			goto out;
		for (j = 0; j < i; j++) {
			if (strcmp(f->packages[j].name, f->packages[i].name) ==
			    0) {
				rc = al_error_set(AL_EINVAL,
				                  "package '%s' given twice",
				                  f->packages[i].name);
				goto out;
			}
		}
	}
	if (f->npackages == 0) {
		for (i = 0; i < in->npackages; i++) {
			if ((rc = select_package(&st, i, NULL, f->full)) < 0)
				goto out;
		}
	}
	for (i = 0; i < f->npackages; i++) {
		long pi = cat_find_package(in, f->packages[i].name);

		if (pi < 0) {
			char *ps = list_packages(in);

			rc = al_error_set(AL_ENOTFOUND,
			                  "package '%s' not found in the "
			                  "catalog; it has %s",
			                  f->packages[i].name, ps ? ps : "");
			free(ps);
			goto out;
		}
		if ((rc = select_package(&st, (size_t)pi, &f->packages[i],
		                         f->full)) < 0)
			goto out;
	}
	if (!f->skip_dependencies) {
		do {
			changed = 0;
			if ((rc = deps_pass(&st, &changed)) < 0)
				goto out;
		} while (changed && ++guard <= in->nbundles);
	}
	if ((rc = al_catalog_new(&res)) < 0)
		goto out;
	cat_use_spool(res, in->spool); /* its bundles' values are there */
	if ((rc = emit(res, &st)) < 0)
		goto out;
	if ((rc = al_catalog_finish(res)) < 0) {
		rc = al_error_wrap(rc, "the filtered catalog is not valid");
		goto out;
	}
	json_decref(res->unresolved_list);
	res->unresolved_list = st.unresolved;
	st.unresolved = NULL;
	*out = res;
	res = NULL;
out:
	al_catalog_free(res);
	state_clear(&st);
	return rc;
}

size_t al_catalog_unresolved_count(const al_catalog *c)
{
	return json_array_size(c->unresolved_list);
}

const char *al_catalog_unresolved_at(const al_catalog *c, size_t i)
{
	return json_string_value(json_array_get(c->unresolved_list, i));
}

/* store_charts.c: the store's Helm chart records, typed: the "charts" array
 * of airlock/releases.json (beside "releases" and "catalogs"), described as
 * a record kind (store_int.h) that store_record.c reads and writes. */
#include "airlock/store.h"
#include "store_int.h"

/* The members of a chart record, in the order they are written; the
 * images sorted, each once. */
static const al_store__field chart_fields[] = {
    AL_STORE__S(al_store_chart, "name", AL_STORE__KEY | AL_STORE__LISTED, name),
    AL_STORE__D(al_store_chart, "digest", AL_STORE__KEY | AL_STORE__LISTED,
                digest, has_digest),
    AL_STORE__S(al_store_chart, "chart", AL_STORE__LISTED, chart),
    AL_STORE__S(al_store_chart, "version", AL_STORE__LISTED, version),
    AL_STORE__S(al_store_chart, "appVersion", 0, app_version),
    AL_STORE__S(al_store_chart, "source", 0, source),
    AL_STORE__S(al_store_chart, "mirrored", 0, mirrored),
    AL_STORE__N(al_store_chart, "unresolved", unresolved),
    AL_STORE__V(al_store_chart, "images", AL_STORE__STRV_SORTED, images,
                nimages),
};

const al_store__kind al_store__chart_kind = {
    "charts", "chart", sizeof(al_store_chart), chart_fields,
    sizeof(chart_fields) / sizeof(chart_fields[0])};

void al_store_chart_clear(al_store_chart *c)
{
	al_store__record_clear(&al_store__chart_kind, c);
}

void al_store_charts_free(al_store_chart *list, size_t n)
{
	al_store__records_free(&al_store__chart_kind, list, n);
}

int al_store_charts_list(al_store *s, al_store_chart **out, size_t *n)
{
	void *v = NULL;
	int rc = al_store__records_list(s, &al_store__chart_kind, &v, n);

	*out = v;
	return rc;
}

int al_store_chart_put(al_store *s, const al_store_chart *c)
{
	return al_store__record_put(s, &al_store__chart_kind, c);
}

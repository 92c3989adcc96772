/* cosign_root.c: a Sigstore trusted root (trusted_root.json) as trust:
 * transparency logs, certificate authorities, CT logs and timestamp
 * authorities, each with its validity window. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/cosign.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "cosign_int.h"

#define MEDIA_PREFIX "application/vnd.dev.sigstore.trustedroot"

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int digits(const char *s, int n, int *out)
{
	int i, v = 0;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/*
 * An RFC 3339 time as protobuf JSON writes a Timestamp
 * ("2023-07-12T15:56:36Z", "2022-12-31T23:59:59.999Z", or with an offset
 * "+01:00") into seconds since the epoch; fractions are dropped (windows
 * are compared to whole seconds). -1 when malformed.
 */
static int parse_rfc3339(int64_t *out, const char *s)
{
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	const char *p;

	if (strlen(s) < 20 || digits(s, 4, &y) < 0 || s[4] != '-' ||
	    digits(s + 5, 2, &mo) < 0 || s[7] != '-' ||
	    digits(s + 8, 2, &d) < 0 || (s[10] != 'T' && s[10] != 't') ||
	    digits(s + 11, 2, &h) < 0 || s[13] != ':' ||
	    digits(s + 14, 2, &mi) < 0 || s[16] != ':' ||
	    digits(s + 17, 2, &sec) < 0)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 60)
		return -1;
	p = s + 19;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		if (digits(p + 1, 2, &oh) < 0 || p[3] != ':' ||
		    digits(p + 4, 2, &om) < 0 || oh > 23 || om > 59)
			return -1;
		p += 6;
	} else {
		return -1;
	}
	if (*p != '\0')
		return -1;
	*out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
	       (int64_t)sign * (oh * 3600 + om * 60);
	return 0;
}

/* A TimeRange {start, end}: start is required (conformance
 * trust-root-tlog-missing-validity-start: a missing start is a malformed
 * root, not an unbounded one), end optional; both inclusive. */
static int window(cs_win *w, const json_t *vf, const char *what,
                  const char *where, size_t idx)
{
	const char *start = al_json_str(vf, "start");
	const char *end = al_json_str(vf, "end");

	if (start == NULL || parse_rfc3339(&w->from, start) < 0)
		return al_error_set(AL_EPARSE,
		                    "%s: %s[%zu]: validFor without a valid "
		                    "start",
		                    what, where, idx);
	w->until = CS_FOREVER_UNTIL;
	if (json_object_get(vf, "end") != NULL &&
	    !json_is_null(json_object_get(vf, "end")) &&
	    (end == NULL || parse_rfc3339(&w->until, end) < 0))
		return al_error_set(AL_EPARSE,
		                    "%s: %s[%zu]: malformed validFor.end", what,
		                    where, idx);
	if (w->until < w->from)
		return al_error_set(AL_EPARSE,
		                    "%s: %s[%zu]: validFor ends before it "
		                    "starts",
		                    what, where, idx);
	return 0;
}

/* The base64 string at obj.key into out; AL_EPARSE when absent or bad. */
static int b64(al_buf *out, const json_t *obj, const char *key)
{
	const char *s = al_json_str(obj, key);
	int rc;

	al_buf_reset(out);
	if (s == NULL)
		return AL_EPARSE;
	rc = al_base64_decode(out, s, strlen(s));
	return rc == AL_ENOMEM ? rc : (rc < 0 ? AL_EPARSE : 0);
}

/* The host of a URL ("https://log2025-1.rekor.sigstore.dev/x" ->
 * "log2025-1.rekor.sigstore.dev"), as sigstore-go takes the checkpoint
 * origin from url.Parse(baseUrl).Hostname(). */
static int url_host(char *out, size_t cap, const char *url)
{
	const char *p = strstr(url, "://"), *e;
	size_t n;

	p = p != NULL ? p + 3 : url;
	e = p + strcspn(p, "/:?#");
	n = (size_t)(e - p);
	if (n == 0 || n >= cap)
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

/* tlogs or ctlogs: TransparencyLogInstance {baseUrl, hashAlgorithm,
 * publicKey {rawBytes, keyDetails, validFor}, logId {keyId}}. */
static int add_logs(cs_key **list, size_t *n, const json_t *logs,
                    const char *what, const char *where, int ct)
{
	al_buf der = AL_BUF_INIT(64 * 1024), id = AL_BUF_INIT(64);
	const json_t *l;
	size_t i;
	int rc = 0;

	json_array_foreach(logs, i, l)
	{
		const json_t *pk = json_object_get(l, "publicKey");
		const char *url = al_json_str(l, "baseUrl");
		const char *kd = al_json_str(pk, "keyDetails");
		char origin[256];
		cs_win w;

		if ((rc = window(&w, json_object_get(pk, "validFor"), what,
		                 where, i)) < 0)
			goto out;
		if ((rc = b64(&der, pk, "rawBytes")) < 0 ||
		    (rc = b64(&id, json_object_get(l, "logId"), "keyId")) < 0 ||
		    id.len != 32 || der.len == 0) {
			rc = rc == AL_ENOMEM
			         ? rc
			         : al_error_set(
			               AL_EPARSE,
			               "%s: %s[%zu]: missing or malformed "
			               "publicKey.rawBytes or "
			               "logId.keyId",
			               what, where, i);
			goto out;
		}
		/* a CT log key in PKCS#1 form (PKCS1_RSA_*, old staging
		 * roots) is no SubjectPublicKeyInfo: no SCT of it can be
		 * checked, and the log is left out */
		if (ct && kd != NULL && strncmp(kd, "PKCS1_", 6) == 0)
			continue;
		if (url == NULL || url_host(origin, sizeof(origin), url) < 0)
			origin[0] = '\0';
		if ((rc = al__cosign_add_key_der(list, n, der.ptr,
		                                 (long)der.len, id.ptr, &w,
		                                 origin, what)) < 0) {
			rc = al_error_wrap(rc, "%s[%zu]", where, i);
			goto out;
		}
	}
out:
	al_buf_free(&der);
	al_buf_free(&id);
	return rc;
}

/* certificateAuthorities or timestampAuthorities: {certChain
 * {certificates [{rawBytes}]}, validFor}; every certificate of a chain
 * is added with the authority's window. */
static int add_cas(X509 ***list, cs_win **win, size_t *n, const json_t *cas,
                   const char *what, const char *where)
{
	al_buf der = AL_BUF_INIT(64 * 1024);
	const json_t *ca, *c;
	size_t i, j;
	int rc = 0;

	json_array_foreach(cas, i, ca)
	{
		const json_t *certs = json_object_get(
		    json_object_get(ca, "certChain"), "certificates");
		cs_win w;

		if ((rc = window(&w, json_object_get(ca, "validFor"), what,
		                 where, i)) < 0)
			goto out;
		if (json_array_size(certs) == 0) {
			rc = al_error_set(AL_EPARSE,
			                  "%s: %s[%zu] without certificates",
			                  what, where, i);
			goto out;
		}
		json_array_foreach(certs, j, c)
		{
			if ((rc = b64(&der, c, "rawBytes")) < 0) {
				rc = rc == AL_ENOMEM
				         ? rc
				         : al_error_set(
				               AL_EPARSE,
				               "%s: %s[%zu] certificate %zu: "
				               "malformed rawBytes",
				               what, where, i, j + 1);
				goto out;
			}
			if ((rc = al__cosign_add_cert_der(list, win, n, der.ptr,
			                                  (long)der.len, &w,
			                                  what)) < 0) {
				rc = al_error_wrap(rc, "%s[%zu]", where, i);
				goto out;
			}
		}
	}
out:
	al_buf_free(&der);
	return rc;
}

int al_cosign_trust_add_trusted_root(al_cosign_trust *t, const uint8_t *p,
                                     size_t n, const char *what)
{
	json_t *root = NULL;
	const char *mt;
	static const char *const lists[] = {"tlogs", "certificateAuthorities",
	                                    "ctlogs", "timestampAuthorities"};
	size_t i;
	int rc;

	if (n > AL_COSIGN_MAX_PEM)
		return al_error_set(AL_ELIMIT,
		                    "%s: trusted root over %llu bytes", what,
		                    (unsigned long long)AL_COSIGN_MAX_PEM);
	if ((rc = al_json_parse(&root, p, n, what)) < 0)
		return rc;
	mt = al_json_str(root, "mediaType");
	if (!json_is_object(root) || mt == NULL ||
	    strncmp(mt, MEDIA_PREFIX, strlen(MEDIA_PREFIX)) != 0) {
		rc = al_error_set(AL_EPARSE,
		                  "%s: not a Sigstore trusted root (mediaType "
		                  "%s)",
		                  what, mt != NULL ? mt : "missing");
		goto out;
	}
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		const json_t *l = json_object_get(root, lists[i]);

		if (l != NULL && !json_is_array(l)) {
			rc = al_error_set(AL_EPARSE, "%s: %s is not a list",
			                  what, lists[i]);
			goto out;
		}
	}
	if ((rc = add_logs(&t->rekor, &t->nrekor,
	                   json_object_get(root, "tlogs"), what, "tlogs", 0)) <
	        0 ||
	    (rc = add_logs(&t->ct, &t->nct, json_object_get(root, "ctlogs"),
	                   what, "ctlogs", 1)) < 0 ||
	    (rc = add_cas(&t->fulcio, &t->fulcio_win, &t->nfulcio,
	                  json_object_get(root, "certificateAuthorities"), what,
	                  "certificateAuthorities")) < 0 ||
	    (rc = add_cas(&t->tsa, &t->tsa_win, &t->ntsa,
	                  json_object_get(root, "timestampAuthorities"), what,
	                  "timestampAuthorities")) < 0)
		goto out;
	rc = 0;
out:
	json_decref(root);
	return rc;
}

int al_cosign_trust_add_trusted_root_file(al_cosign_trust *t, const char *path)
{
	al_buf b = AL_BUF_INIT(AL_COSIGN_MAX_PEM);
	int rc;

	if ((rc = al_fs_read_file(path, &b)) < 0)
		return rc;
	rc = al_cosign_trust_add_trusted_root(t, b.ptr, b.len, path);
	al_buf_free(&b);
	return rc;
}

/* lazy_curl.c: libcurl for the airlock program, opened with dlopen on the first
 * call, so that commands without network work never load it (and its 30-odd
 * dependencies). */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>

#include "lazy.h"

/* Every libcurl function the library calls, but the variadic ones and
 * global init/cleanup: X(return type, name, parameters, arguments) and XV
 * for void functions. A function missing here is a link error of the
 * airlock program that names it: add its line. */
#define AL_CURL_FNS(X, XV)                                                     \
	X(CURL *, curl_easy_init, (void), ())                                  \
	XV(curl_easy_cleanup, (CURL * c), (c))                                 \
	XV(curl_easy_reset, (CURL * c), (c))                                   \
	X(const char *, curl_easy_strerror, (CURLcode e), (e))                 \
	XV(curl_free, (void *p), (p))                                          \
	X(CURLM *, curl_multi_init, (void), ())                                \
	X(CURLMcode, curl_multi_add_handle, (CURLM * m, CURL * c), (m, c))     \
	X(CURLMcode, curl_multi_remove_handle, (CURLM * m, CURL * c), (m, c))  \
	X(CURLMcode, curl_multi_cleanup, (CURLM * m), (m))                     \
	X(CURLMsg *, curl_multi_info_read, (CURLM * m, int *left), (m, left))  \
	X(CURLMcode, curl_multi_perform, (CURLM * m, int *running),            \
	  (m, running))                                                        \
	X(CURLMcode, curl_multi_poll,                                          \
	  (CURLM * m, struct curl_waitfd * fds, unsigned nfds, int ms,         \
	   int *ret),                                                          \
	  (m, fds, nfds, ms, ret))                                             \
	X(struct curl_slist *, curl_slist_append,                              \
	  (struct curl_slist * l, const char *s), (l, s))                      \
	XV(curl_slist_free_all, (struct curl_slist * l), (l))                  \
	X(CURLU *, curl_url, (void), ())                                       \
	XV(curl_url_cleanup, (CURLU * u), (u))                                 \
	X(CURLUcode, curl_url_get,                                             \
	  (CURLU * u, CURLUPart what, char **part, unsigned int flags),        \
	  (u, what, part, flags))                                              \
	X(CURLUcode, curl_url_set,                                             \
	  (CURLU * u, CURLUPart what, const char *part, unsigned int flags),   \
	  (u, what, part, flags))                                              \
	X(curl_version_info_data *, curl_version_info, (CURLversion v), (v))

#define ENUM_X(ret, name, params, args) F_##name,
#define ENUM_XV(name, params, args) F_##name,
enum {
	AL_CURL_FNS(ENUM_X, ENUM_XV) F_setopt,
	F_getinfo,
	F_global_init,
	F_global_cleanup,
	F_COUNT
};

#define NAME_X(ret, name, params, args) #name,
#define NAME_XV(name, params, args) #name,
static const char *const names[F_COUNT] = {
    AL_CURL_FNS(NAME_X, NAME_XV) "curl_easy_setopt", "curl_easy_getinfo",
    "curl_global_init", "curl_global_cleanup"};

static void (*fn[F_COUNT])(void);
static pthread_once_t once = PTHREAD_ONCE_INIT;
static long init_flags = CURL_GLOBAL_DEFAULT;
static atomic_int loaded;
static CURLcode init_result;

static void load(void)
{
	al_lazy_open(AL_CURL_SONAME, names, fn, F_COUNT);
	init_result = ((CURLcode(*)(long))fn[F_global_init])(init_flags);
	atomic_store(&loaded, 1);
}

#define DEF_X(ret, name, params, args)                                         \
	ret name params                                                        \
	{                                                                      \
		pthread_once(&once, load);                                     \
		return ((ret(*) params)fn[F_##name])args;                      \
	}
#define DEF_XV(name, params, args)                                             \
	void name params                                                       \
	{                                                                      \
		pthread_once(&once, load);                                     \
		((void(*) params)fn[F_##name]) args;                           \
	}
AL_CURL_FNS(DEF_X, DEF_XV)

/* Deferred to the first real call; libcurl's own init then runs once,
 * under pthread_once, before anything else of libcurl. */
CURLcode curl_global_init(long flags)
{
	init_flags = flags;
	return atomic_load(&loaded) ? init_result : CURLE_OK;
}

void curl_global_cleanup(void)
{
	if (atomic_load(&loaded))
		((void (*)(void))fn[F_global_cleanup])();
}

/* The option's number says the type of its one argument (curl.h,
 * CURLOPTTYPE_*): long, curl_off_t, or a pointer (object, function or
 * blob: one representation on the platforms airlock builds for). */
CURLcode curl_easy_setopt(CURL *c, CURLoption opt, ...)
{
	CURLcode (*f)(CURL *, CURLoption, ...);
	CURLcode rc;
	va_list ap;

	pthread_once(&once, load);
	f = (CURLcode(*)(CURL *, CURLoption, ...))fn[F_setopt];
	va_start(ap, opt);
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		rc = f(c, opt, va_arg(ap, long));
	else if (opt >= CURLOPTTYPE_OFF_T && opt < CURLOPTTYPE_BLOB)
		rc = f(c, opt, va_arg(ap, curl_off_t));
	else
		rc = f(c, opt, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

/* Every CURLINFO_* takes one pointer to where the result goes. */
CURLcode curl_easy_getinfo(CURL *c, CURLINFO info, ...)
{
	CURLcode (*f)(CURL *, CURLINFO, ...);
	CURLcode rc;
	va_list ap;

	pthread_once(&once, load);
	f = (CURLcode(*)(CURL *, CURLINFO, ...))fn[F_getinfo];
	va_start(ap, info);
	rc = f(c, info, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

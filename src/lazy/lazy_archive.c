/* lazy_archive.c: libarchive for the airlock program, opened with dlopen on the
 * first call, so that commands that read no archive never load it (and its
 * compression and XML dependencies). */
#include <archive.h>
#include <archive_entry.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>

#include "lazy.h"

/* Every libarchive function the library calls but the variadic
 * archive_set_error: X(return type, name, parameters, arguments) and XV
 * for void functions. A function missing here is a link error of the
 * airlock program that names it: add its line. */
#define AL_ARCHIVE_FNS(X, XV)                                                  \
	X(struct archive *, archive_read_new, (void), ())                      \
	X(int, archive_read_free, (struct archive * a), (a))                   \
	X(int, archive_read_support_filter_gzip, (struct archive * a), (a))    \
	X(int, archive_read_support_format_empty, (struct archive * a), (a))   \
	X(int, archive_read_support_format_tar, (struct archive * a), (a))     \
	X(int, archive_read_open,                                              \
	  (struct archive * a, void *ud, archive_open_callback *o,             \
	   archive_read_callback *r, archive_close_callback *c),               \
	  (a, ud, o, r, c))                                                    \
	X(int, archive_read_next_header,                                       \
	  (struct archive * a, struct archive_entry * *e), (a, e))             \
	X(la_ssize_t, archive_read_data,                                       \
	  (struct archive * a, void *p, size_t n), (a, p, n))                  \
	X(int, archive_read_data_block,                                        \
	  (struct archive * a, const void **p, size_t *n, la_int64_t *off),    \
	  (a, p, n, off))                                                      \
	X(int, archive_read_data_skip, (struct archive * a), (a))              \
	X(la_int64_t, archive_read_header_position, (struct archive * a), (a)) \
	X(struct archive *, archive_write_new, (void), ())                     \
	X(int, archive_write_free, (struct archive * a), (a))                  \
	X(int, archive_write_close, (struct archive * a), (a))                 \
	X(int, archive_write_open_fd, (struct archive * a, int fd), (a, fd))   \
	X(int, archive_write_add_filter_gzip, (struct archive * a), (a))       \
	X(int, archive_write_set_filter_option,                                \
	  (struct archive * a, const char *m, const char *o, const char *v),   \
	  (a, m, o, v))                                                        \
	X(int, archive_write_set_bytes_per_block, (struct archive * a, int n), \
	  (a, n))                                                              \
	X(int, archive_write_set_format_pax_restricted, (struct archive * a),  \
	  (a))                                                                 \
	X(int, archive_write_header,                                           \
	  (struct archive * a, struct archive_entry * e), (a, e))              \
	X(la_ssize_t, archive_write_data,                                      \
	  (struct archive * a, const void *p, size_t n), (a, p, n))            \
	X(int, archive_errno, (struct archive * a), (a))                       \
	X(const char *, archive_error_string, (struct archive * a), (a))       \
	X(const char *, archive_version_details, (void), ())                   \
	X(struct archive_entry *, archive_entry_new, (void), ())               \
	XV(archive_entry_free, (struct archive_entry * e), (e))                \
	X(__LA_MODE_T, archive_entry_filetype, (struct archive_entry * e),     \
	  (e))                                                                 \
	X(const char *, archive_entry_hardlink, (struct archive_entry * e),    \
	  (e))                                                                 \
	X(const char *, archive_entry_pathname, (struct archive_entry * e),    \
	  (e))                                                                 \
	X(const char *, archive_entry_symlink, (struct archive_entry * e),     \
	  (e))                                                                 \
	X(time_t, archive_entry_mtime, (struct archive_entry * e), (e))        \
	X(la_int64_t, archive_entry_size, (struct archive_entry * e), (e))     \
	X(int, archive_entry_size_is_set, (struct archive_entry * e), (e))     \
	X(int, archive_entry_sparse_count, (struct archive_entry * e), (e))    \
	XV(archive_entry_set_filetype,                                         \
	   (struct archive_entry * e, unsigned int t), (e, t))                 \
	XV(archive_entry_set_mtime,                                            \
	   (struct archive_entry * e, time_t t, long ns), (e, t, ns))          \
	XV(archive_entry_set_pathname,                                         \
	   (struct archive_entry * e, const char *p), (e, p))                  \
	XV(archive_entry_set_perm, (struct archive_entry * e, __LA_MODE_T m),  \
	   (e, m))                                                             \
	XV(archive_entry_set_size, (struct archive_entry * e, la_int64_t n),   \
	   (e, n))

#define ENUM_X(ret, name, params, args) F_##name,
#define ENUM_XV(name, params, args) F_##name,
enum { AL_ARCHIVE_FNS(ENUM_X, ENUM_XV) F_set_error, F_COUNT };

#define NAME_X(ret, name, params, args) #name,
#define NAME_XV(name, params, args) #name,
static const char *const names[F_COUNT] = {
    AL_ARCHIVE_FNS(NAME_X, NAME_XV) "archive_set_error"};

static void (*fn[F_COUNT])(void);
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	al_lazy_open(AL_ARCHIVE_SONAME, names, fn, F_COUNT);
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
AL_ARCHIVE_FNS(DEF_X, DEF_XV)

/* Formatted here and handed over as "%s": a va_list cannot be passed on
 * to a variadic function. */
void archive_set_error(struct archive *a, int err, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	pthread_once(&once, load);
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		msg[0] = '\0';
	((void (*)(struct archive *, int, const char *, ...))fn[F_set_error])(
	    a, err, "%s", msg);
}

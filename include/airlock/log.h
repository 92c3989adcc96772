/* log.h: log messages and progress reports, routed to a handler the program
 * installs. */
#ifndef AIRLOCK_LOG_H
#define AIRLOCK_LOG_H

#include "common.h"

AL_BEGIN_DECL

typedef enum al_log_level {
	AL_LOG_ERROR = 0,
	AL_LOG_WARN = 1,
	AL_LOG_INFO = 2,
	AL_LOG_DEBUG = 3,
} al_log_level;

typedef void (*al_log_fn)(al_log_level level, const char *msg, void *ud);

/* Install the process-wide handler (NULL: discard). The library never
 * prints on its own. Not thread-safe: call before starting work. */
AL_EXPORT void al_log_set_handler(al_log_fn fn, void *ud);
AL_EXPORT void al_log_set_level(al_log_level level);
AL_EXPORT al_log_level al_log_get_level(void);
/* Thread-safe. Messages above the level are dropped cheaply. The handler
 * receives the message escaped with al_str_escape (buf.h): no control
 * character or terminal escape sequence, whatever the arguments held. */
AL_EXPORT void al_log(al_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define al_log_error(...) al_log(AL_LOG_ERROR, __VA_ARGS__)
#define al_log_warn(...) al_log(AL_LOG_WARN, __VA_ARGS__)
#define al_log_info(...) al_log(AL_LOG_INFO, __VA_ARGS__)
#define al_log_debug(...) al_log(AL_LOG_DEBUG, __VA_ARGS__)

/* A snapshot of long-running work, for progress display. */
typedef struct al_progress_info {
	const char *phase;      /* "blobs", "manifests", "pack"... */
	uint64_t bytes_done;    /* transferred this run */
	uint64_t bytes_total;   /* expected (0 if unknown) */
	uint64_t bytes_skipped; /* already present, not transferred */
	uint64_t items_done;
	uint64_t items_total;
	uint64_t elapsed_ms;
} al_progress_info;

/* Called from worker threads, serialised by the caller, at most every
 * ~200 ms plus once at the end with final figures. */
typedef void (*al_progress_fn)(const al_progress_info *info, void *ud);

AL_END_DECL

#endif

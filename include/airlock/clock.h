/* clock.h: monotonic time, deadlines, cancellation, duration and size parsing.
 */
#ifndef AIRLOCK_CLOCK_H
#define AIRLOCK_CLOCK_H

#include "common.h"

AL_BEGIN_DECL

typedef struct al_cancel al_cancel;

/*
 * Every time the library reads and every wait it makes go through one clock:
 * the system's (CLOCK_MONOTONIC and CLOCK_REALTIME, the default) or one a
 * test installs, so that a test of a 40-minute deadline takes milliseconds
 * and cannot fail because the machine is busy (docs/testing.md).
 *
 * A clock source: now_ms is monotonic milliseconds, wall_ms milliseconds
 * since the epoch, sleep_ms waits ms (returning AL_ECANCELED early when c
 * is set; c may be NULL). All three are called from any thread.
 */
typedef struct al_clock_source {
	uint64_t (*now_ms)(void *ctx);
	uint64_t (*wall_ms)(void *ctx);
	int (*sleep_ms)(void *ctx, uint64_t ms, const al_cancel *c);
	void *ctx;
} al_clock_source;

/*
 * Install src as the clock of the whole library (copied; NULL restores the
 * system clock). Install it before starting work: a deadline taken on one
 * clock means nothing on another. Not thread-safe against concurrent calls
 * of itself.
 */
AL_EXPORT void al_clock_set_source(const al_clock_source *src);

/*
 * The virtual clock, a source for tests: time starts at start_ms (monotonic)
 * and wall_ms (epoch) and moves only when al_clock_advance() is called or
 * when something sleeps: al_sleep_ms(ms) returns at once, having moved the
 * clock to at least the time the sleep would have ended (sleeps that
 * overlap in several threads move it to the latest of their ends, not their
 * sum). Waits on real events (a socket, a condition variable) are real
 * waits; the deadlines they check are read on this clock. Installs itself
 * (al_clock_set_source) and resets its time.
 */
AL_EXPORT void al_clock_use_virtual(uint64_t start_ms, uint64_t wall_ms);
/* Move the virtual clock forward by ms (no effect on the system clock). */
AL_EXPORT void al_clock_advance(uint64_t ms);
/* 1 when the virtual clock is installed. */
AL_EXPORT int al_clock_is_virtual(void);

/* Milliseconds on the library's monotonic clock (CLOCK_MONOTONIC unless a
 * source is installed). */
AL_EXPORT uint64_t al_clock_now_ms(void);
/* Milliseconds since the epoch (wall clock), for timestamps only. */
AL_EXPORT uint64_t al_clock_wall_ms(void);
/* Room for an RFC 3339 UTC timestamp, "2026-12-04T05:00:00Z" and a NUL. */
#define AL_RFC3339_LEN 21
/* wall_ms (al_clock_wall_ms) as "YYYY-MM-DDTHH:MM:SSZ" in out; the epoch
 * when the time cannot be represented. */
AL_EXPORT void al_clock_rfc3339(char out[AL_RFC3339_LEN], uint64_t wall_ms);
/* The current time so, as a new string (NULL: out of memory). */
AL_EXPORT char *al_clock_rfc3339_now(void);

/* A point on the monotonic clock; end_ms == 0 means "no deadline". */
typedef struct al_deadline {
	uint64_t end_ms;
} al_deadline;

#define AL_DEADLINE_NONE ((al_deadline){0})

/* A deadline ms from now (ms == 0 gives AL_DEADLINE_NONE). */
AL_EXPORT al_deadline al_deadline_in(uint64_t ms);
/* The earlier of two deadlines (NONE is later than everything). */
AL_EXPORT al_deadline al_deadline_min(al_deadline a, al_deadline b);
AL_EXPORT int al_deadline_expired(al_deadline d);
/* Remaining ms; UINT64_MAX for NONE, 0 when expired. */
AL_EXPORT uint64_t al_deadline_remaining_ms(al_deadline d);

/*
 * A cancellation flag. al_cancel_set() is async-signal-safe and
 * thread-safe; everything long-running polls al_cancel_is_set().
 */
AL_EXPORT int al_cancel_new(al_cancel **out);
AL_EXPORT void al_cancel_free(al_cancel *c);
AL_EXPORT void al_cancel_set(al_cancel *c);
/* 0 for a NULL flag. */
AL_EXPORT int al_cancel_is_set(const al_cancel *c);

/* Sleep ms on the library's clock, waking early (returning AL_ECANCELED) if c
 * is set. c may be NULL. On the virtual clock the sleep moves the clock. */
AL_EXPORT int al_sleep_ms(uint64_t ms, const al_cancel *c);
/*
 * The same for a background loop (a lease renewer, a watcher) that must not
 * make time pass for the work it accompanies: on the virtual clock it waits,
 * in short real steps, until the work's own sleeps (or al_clock_advance)
 * moved the clock past its end. On any other clock it is al_sleep_ms.
 */
AL_EXPORT int al_wait_ms(uint64_t ms, const al_cancel *c);

/*
 * Parse a duration: "500ms", "30s", "2m", "1h30m", "1.5s"; a bare number is
 * seconds. AL_EPARSE with a message naming s.
 */
AL_EXPORT int al_parse_duration(const char *s, uint64_t *ms);
/* Parse a size: "4G", "512M", "700MiB", "1024" (bytes), binary multiples. */
AL_EXPORT int al_parse_size(const char *s, uint64_t *bytes);

/*
 * Exponential backoff with full jitter for attempt (0-based):
 * random in [base/2, min(max, base * 2^attempt)].
 */
AL_EXPORT uint64_t al_backoff_ms(unsigned attempt, uint64_t base_ms,
                                 uint64_t max_ms);

AL_END_DECL

#endif

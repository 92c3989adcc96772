/* clock_int.h: real time, for waits on other processes and threads that no
 * installed clock can speed up. */
#ifndef AIRLOCK_CLOCK_INT_H
#define AIRLOCK_CLOCK_INT_H

#include <pthread.h>
#include <stdint.h>

#include "airlock/clock.h"

/*
 * Wait on cv (initialised with CLOCK_MONOTONIC, pthread_condattr_setclock)
 * for at most ms of real time: what signals it is real work (threads, I/O).
 * A deadline the caller checks around it is read with al_clock_now_ms, so it
 * follows an installed clock. Returns pthread_cond_timedwait's result.
 */
int al__cond_wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, uint64_t ms);

/* CLOCK_MONOTONIC in ms, and a real sleep, whatever clock is installed: for
 * a timeout on another process (a credential helper, a store lock held by
 * another airlock), which runs on real time. */
uint64_t al__real_now_ms(void);
void al__real_sleep_ms(uint64_t ms);

/*
 * On the virtual clock, a caller waiting for real work that has made no
 * progress for idle_ms of real time (at least the idle threshold) moves the
 * clock to dl: a hang counts as reaching the deadline, so a test of a long
 * budget against a server that never answers takes a moment of real time.
 * No effect on any other clock, or without a deadline. The threshold,
 * AL__VIRTUAL_IDLE_MS by default, is far more than any answer on loopback
 * takes, even on a loaded machine under ASan; a unit test whose server
 * never answers may lower it (al__clock_set_idle_ms).
 */
#define AL__VIRTUAL_IDLE_MS 3000
void al__clock_idle(uint64_t idle_ms, al_deadline dl);
void al__clock_set_idle_ms(uint64_t ms);
/* 1 when the system clock is installed (no test or caller clock). */
int al__clock_is_system(void);
void al__clock_idle(uint64_t idle_ms, al_deadline dl);

#endif

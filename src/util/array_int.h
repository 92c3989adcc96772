/* array_int.h: growing the library's arrays by doubling, and freeing an
 * array of strings (src/util/buf.c). */
#ifndef AIRLOCK_ARRAY_INT_H
#define AIRLOCK_ARRAY_INT_H

#include <stddef.h>

/*
 * Room for need elements of size bytes in arr, whose allocation holds
 * *cap of them: when need > *cap, arr is reallocated to at least twice
 * *cap (exactly need at first) and *cap updated. Returns the array to
 * use (arr itself when it had room), or NULL with AL_ENOMEM set, arr
 * untouched.
 * n appends cost O(n) copies whatever the allocator (a growth by one
 * element per append is quadratic under ASan and many mallocs).
 */
void *al__array_grow(void *arr, size_t *cap, size_t need, size_t size);

/*
 * The capacity an array of n elements grown only by al__array_grow_n
 * holds: 0 for 0, else the next power of two at or above n (n itself
 * past SIZE_MAX / 2). A public report keeps only its count: the
 * capacity follows from it, so no bookkeeping field is exposed.
 */
size_t al__array_cap(size_t n);

/*
 * al__array_grow for an array of n elements whose capacity is not
 * stored: room for need of them, reallocating to al__array_cap(need)
 * when need > al__array_cap(n). An array whose count went down (moved
 * out, duplicates dropped) holds at least that much, so this stays
 * correct. Returns the array to use, or NULL with AL_ENOMEM set, arr
 * untouched.
 */
void *al__array_grow_n(void *arr, size_t n, size_t need, size_t size);

/* Free the n strings of v, then v itself (v may be NULL when n is 0). */
void al__strv_free(char **v, size_t n);

#endif

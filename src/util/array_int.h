/* array_int.h: growing the library's arrays by doubling (src/util/buf.c). */
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

#endif

/* tools/jscan.h -- read values out of a JSON text without building a
 * tree: what raid5ctl needs of the control socket's `status --json`.
 *
 * A value is named by a pointer into the text at its first character;
 * the text must outlive the pointers.  Lookups walk the text each time
 * (the replies are a few KiB).  Malformed text makes a lookup fail
 * (NULL, or false) and never reads past the terminating NUL.
 *
 * Keys are compared byte for byte with what is between the quotes, so a
 * key written with escapes is not found: the server writes none.
 */
#ifndef TOOLS_JSCAN_H
#define TOOLS_JSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value of member key of the object at obj, or NULL. */
const char *jscan_get (const char *obj, const char *key)
  __attribute__((nonnull));

/* Follow a dotted path of object keys ("job.done_stripes") from v;
 * NULL if any step is missing.
 */
const char *jscan_path (const char *v, const char *path)
  __attribute__((nonnull));

/* Element i (from 0) of the array at arr, or NULL. */
const char *jscan_index (const char *arr, unsigned i)
  __attribute__((nonnull));

/* The value at v (which may be NULL: false) as a number, a boolean, or a
 * string copied into buf (always NUL-terminated; escapes of characters
 * below 0x80 are decoded, others kept as written).  False if v is not of
 * that type, the number does not fit, or the string is longer than len-1.
 */
bool jscan_u64 (const char *v, uint64_t *out) __attribute__((nonnull (2)));
bool jscan_i64 (const char *v, int64_t *out) __attribute__((nonnull (2)));
bool jscan_bool (const char *v, bool *out) __attribute__((nonnull (2)));
bool jscan_str (const char *v, char *buf, size_t len)
  __attribute__((nonnull (2)));

#endif /* TOOLS_JSCAN_H */

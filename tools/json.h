/* tools/json.h -- a small streaming JSON writer for --json output.
 *
 * Values are written as they come, indented two spaces per level.  Inside
 * an object every value needs a key; inside an array (or at the top) the
 * key must be NULL.  Numbers are written as numbers; callers give null for
 * "none" (e.g. md's MaxSector) rather than a number a JSON reader cannot
 * hold exactly.  Strings are escaped; bytes >= 0x80 are copied (UTF-8).
 */
#ifndef TOOLS_JSON_H
#define TOOLS_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json {
  FILE *fp;
  unsigned depth;
  bool need_comma;            /* the current container has a value */
};

void json_init (struct json *j, FILE *fp) __attribute__((nonnull));

/* Open '{' or '[' (as the value of key), and close the innermost. */
void json_open (struct json *j, const char *key, char bracket)
  __attribute__((nonnull (1)));
void json_close (struct json *j, char bracket) __attribute__((nonnull));

/* A string (NULL writes null), numbers, a boolean, null. */
void json_str (struct json *j, const char *key, const char *v)
  __attribute__((nonnull (1)));
void json_u64 (struct json *j, const char *key, uint64_t v)
  __attribute__((nonnull (1)));
void json_i64 (struct json *j, const char *key, int64_t v)
  __attribute__((nonnull (1)));
void json_bool (struct json *j, const char *key, bool v)
  __attribute__((nonnull (1)));
void json_null (struct json *j, const char *key) __attribute__((nonnull (1)));

#endif /* TOOLS_JSON_H */

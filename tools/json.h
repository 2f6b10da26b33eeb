/* tools/json.h -- the --json writer of raid5ctl, on json-c.
 *
 * Values are added as they come into a json-c tree; closing the outermost
 * container prints it (json-c's pretty form, two spaces per level, '/'
 * unescaped) and frees it.  Inside an object every value needs a key;
 * inside an array (or at the top) the key must be NULL.  Numbers are
 * numbers; callers give null for "none" (e.g. md's MaxSector) rather than
 * a number a JSON reader cannot hold exactly.
 */
#ifndef TOOLS_JSON_H
#define TOOLS_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#define JSON_MAX_DEPTH 16

struct json {
  FILE *fp;
  unsigned depth;
  json_object *open[JSON_MAX_DEPTH];  /* the containers open, outermost first */
};

void tool_json_init (struct json *j, FILE *fp) __attribute__((nonnull));

/* Open '{' or '[' (as the value of key), and close the innermost. */
void tool_json_open (struct json *j, const char *key, char bracket)
  __attribute__((nonnull (1)));
void tool_json_close (struct json *j, char bracket) __attribute__((nonnull));

/* A string (NULL writes null), numbers, a boolean, null. */
void tool_json_str (struct json *j, const char *key, const char *v)
  __attribute__((nonnull (1)));
void tool_json_u64 (struct json *j, const char *key, uint64_t v)
  __attribute__((nonnull (1)));
void tool_json_i64 (struct json *j, const char *key, int64_t v)
  __attribute__((nonnull (1)));
/* A number written exactly as text says ("2.000"), e.g. a ratio. */
void tool_json_decimal (struct json *j, const char *key, const char *text)
  __attribute__((nonnull (1, 3)));
void tool_json_bool (struct json *j, const char *key, bool v)
  __attribute__((nonnull (1)));
void tool_json_null (struct json *j, const char *key) __attribute__((nonnull (1)));

/* Print o on fp as raid5ctl prints JSON (pretty, '/' unescaped; no
 * newline after it: the callers end their line).
 */
void tool_json_print (FILE *fp, json_object *o) __attribute__((nonnull));

#endif /* TOOLS_JSON_H */

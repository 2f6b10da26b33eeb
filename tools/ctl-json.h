/* tools/ctl-json.h -- reading a server's status --json (ctl-json.c):
 * typed members of json-c objects, and one status fetched and handed to
 * a parser.  Shared by --wait (ctl-wait.c) and monitor (monitor.c).
 */
#ifndef TOOLS_CTL_JSON_H
#define TOOLS_CTL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* Member key of o, if it is of type t (o may be NULL); else NULL. */
json_object *ctl_json_member (json_object *o, const char *key, json_type t);
/* The value under key, if it is there with the right type (u64: and
 * not negative; str: and it fits len with its NUL).
 */
bool ctl_json_u64 (json_object *o, const char *key, uint64_t *out);
bool ctl_json_i64 (json_object *o, const char *key, int64_t *out);
bool ctl_json_bool (json_object *o, const char *key, bool *out);
bool ctl_json_str (json_object *o, const char *key, char *buf, size_t len);

/* Ask the server at path for status --json and give the object to fn,
 * which says whether it understood it.  TOOL_OK, or TOOL_FAIL after one
 * error line (no server, an ERROR reply, a reply fn did not take).
 */
int ctl_status (const char *path, bool (*fn) (json_object *, void *),
                void *opaque) __attribute__((nonnull (1, 2)));

#endif /* TOOLS_CTL_JSON_H */

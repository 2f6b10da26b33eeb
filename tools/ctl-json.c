/* tools/ctl-json.c -- a server's status --json, read (ctl-json.h). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ctl-json.h"
#include "tools/ctl.h"
#include "tools/raid5ctl.h"

/* Member key of object o, if it is of type t. */
json_object *
ctl_json_member (json_object *o, const char *key, json_type t)
{
  json_object *v;

  return o && json_object_object_get_ex (o, key, &v) &&
    json_object_is_type (v, t) ? v : NULL;
}

bool
ctl_json_u64 (json_object *o, const char *key, uint64_t *out)
{
  json_object *v = ctl_json_member (o, key, json_type_int);

  if (v == NULL || json_object_get_int64 (v) < 0)
    return false;
  *out = json_object_get_uint64 (v);
  return true;
}

bool
ctl_json_i64 (json_object *o, const char *key, int64_t *out)
{
  json_object *v = ctl_json_member (o, key, json_type_int);

  if (v)
    *out = json_object_get_int64 (v);
  return v != NULL;
}

bool
ctl_json_bool (json_object *o, const char *key, bool *out)
{
  json_object *v = ctl_json_member (o, key, json_type_boolean);

  if (v)
    *out = json_object_get_boolean (v);
  return v != NULL;
}

bool
ctl_json_str (json_object *o, const char *key, char *buf, size_t len)
{
  json_object *v = ctl_json_member (o, key, json_type_string);

  return v && (size_t) snprintf (buf, len, "%s", json_object_get_string (v))
    < len;
}

/* One status, parsed by fn: the reply's first line is the JSON object. */
int
ctl_status (const char *path, bool (*fn) (json_object *, void *),
            void *opaque)
{
  json_object *s = NULL;
  char *reply, *nl;
  int r;

  if (ctl_request (path, "status --json", &reply) != TOOL_OK)
    return TOOL_FAIL;
  if ((r = ctl_reply (reply, NULL)) == TOOL_OK) {
    if ((nl = strchr (reply, '\n')) != NULL)
      *nl = '\0';
    s = json_tokener_parse (reply);
    if (s == NULL || !fn (s, opaque))
      r = tool_error ("%s: status --json: a reply raid5ctl does not "
                      "understand", path);
    json_object_put (s);
  }
  free (reply);
  return r;
}

/* tools/json.c -- the --json writer on json-c (see json.h). */
#include <config.h>

#include <assert.h>
#include <stdlib.h>

#include "tools/json.h"

void
tool_json_init (struct json *j, FILE *fp)
{
  *j = (struct json) { .fp = fp };
}

void
tool_json_print (FILE *fp, json_object *o)
{
  fputs (json_object_to_json_string_ext (o, JSON_C_TO_STRING_PRETTY |
                                         JSON_C_TO_STRING_SPACED |
                                         JSON_C_TO_STRING_NOSLASHESCAPE),
         fp);
}

/* Put v (owned from now on by its container) in the innermost one. */
static void
add (struct json *j, const char *key, json_object *v)
{
  json_object *c;

  if (j->depth == 0) {        /* a bare value at the top */
    tool_json_print (j->fp, v);
    json_object_put (v);
    return;
  }
  c = j->open[j->depth - 1];
  if (json_object_is_type (c, json_type_array))
    json_object_array_add (c, v);
  else
    json_object_object_add (c, key ? key : "", v);
}

void
tool_json_open (struct json *j, const char *key, char bracket)
{
  json_object *c = bracket == '{' ? json_object_new_object ()
                                  : json_object_new_array ();

  assert (j->depth < JSON_MAX_DEPTH);
  if (j->depth > 0)
    add (j, key, json_object_get (c));    /* the parent holds one ref */
  j->open[j->depth++] = c;
}

void
tool_json_close (struct json *j, char bracket)
{
  json_object *c;

  (void) bracket;
  assert (j->depth > 0);
  c = j->open[--j->depth];
  if (j->depth == 0)
    tool_json_print (j->fp, c);
  json_object_put (c);          /* ours; the parent keeps its own */
}

void
tool_json_str (struct json *j, const char *key, const char *v)
{
  add (j, key, v ? json_object_new_string (v) : NULL);
}

void
tool_json_u64 (struct json *j, const char *key, uint64_t v)
{
  add (j, key, json_object_new_uint64 (v));
}

void
tool_json_i64 (struct json *j, const char *key, int64_t v)
{
  add (j, key, json_object_new_int64 (v));
}

void
tool_json_decimal (struct json *j, const char *key, const char *text)
{
  add (j, key, json_object_new_double_s (strtod (text, NULL), text));
}

void
tool_json_bool (struct json *j, const char *key, bool v)
{
  add (j, key, json_object_new_boolean (v));
}

void
tool_json_null (struct json *j, const char *key)
{
  add (j, key, NULL);
}

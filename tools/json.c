/* tools/json.c -- streaming JSON writer (see json.h). */
#include <config.h>

#include <inttypes.h>

#include "tools/json.h"

void
json_init (struct json *j, FILE *fp)
{
  *j = (struct json) { .fp = fp };
}

static void
put_string (FILE *fp, const char *s)
{
  fputc ('"', fp);
  for (; *s; s++) {
    unsigned char c = (unsigned char) *s;

    if (c == '"' || c == '\\')
      fprintf (fp, "\\%c", c);
    else if (c == '\n')
      fputs ("\\n", fp);
    else if (c == '\t')
      fputs ("\\t", fp);
    else if (c < 0x20 || c == 0x7f)
      fprintf (fp, "\\u%04x", c);
    else
      fputc (c, fp);
  }
  fputc ('"', fp);
}

/* Separator, indentation and key before a value. */
static void
begin_value (struct json *j, const char *key)
{
  if (j->need_comma)
    fputc (',', j->fp);
  if (j->depth > 0)
    fprintf (j->fp, "\n%*s", (int) (2 * j->depth), "");
  if (key != NULL) {
    put_string (j->fp, key);
    fputs (": ", j->fp);
  }
  j->need_comma = true;
}

void
json_open (struct json *j, const char *key, char bracket)
{
  begin_value (j, key);
  fputc (bracket, j->fp);
  j->depth++;
  j->need_comma = false;
}

void
json_close (struct json *j, char bracket)
{
  j->depth--;
  if (j->need_comma)
    fprintf (j->fp, "\n%*s", (int) (2 * j->depth), "");
  fputc (bracket == '{' ? '}' : bracket == '[' ? ']' : bracket, j->fp);
  j->need_comma = true;
  if (j->depth == 0)
    fputc ('\n', j->fp);
}

void
json_str (struct json *j, const char *key, const char *v)
{
  begin_value (j, key);
  if (v == NULL)
    fputs ("null", j->fp);
  else
    put_string (j->fp, v);
}

void
json_u64 (struct json *j, const char *key, uint64_t v)
{
  begin_value (j, key);
  fprintf (j->fp, "%" PRIu64, v);
}

void
json_i64 (struct json *j, const char *key, int64_t v)
{
  begin_value (j, key);
  fprintf (j->fp, "%" PRId64, v);
}

void
json_bool (struct json *j, const char *key, bool v)
{
  begin_value (j, key);
  fputs (v ? "true" : "false", j->fp);
}

void
json_null (struct json *j, const char *key)
{
  begin_value (j, key);
  fputs ("null", j->fp);
}

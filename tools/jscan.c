/* tools/jscan.c -- read values out of a JSON text (see jscan.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/jscan.h"

static const char *
ws (const char *p)
{
  while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
    p++;
  return p;
}

/* Past the string whose opening quote is at p, or NULL. */
static const char *
skip_string (const char *p)
{
  for (p++; *p != '"'; p++) {
    if (*p == '\0' || (*p == '\\' && *++p == '\0'))
      return NULL;
  }
  return p + 1;
}

/* Past the object or array at p (brackets counted, strings skipped). */
static const char *
skip_container (const char *p)
{
  unsigned depth = 0;

  do {
    if (*p == '"') {
      if ((p = skip_string (p)) == NULL)
        return NULL;
      continue;
    }
    if (*p == '\0')
      return NULL;
    depth += *p == '{' || *p == '[';
    depth -= *p == '}' || *p == ']';
    p++;
  } while (depth > 0);
  return p;
}

/* Past the value at p (after white space), or NULL. */
static const char *
skip_value (const char *p)
{
  p = ws (p);
  if (*p == '"')
    return skip_string (p);
  if (*p == '{' || *p == '[')
    return skip_container (p);
  if (*p == '\0' || strchr (",:}]", *p))
    return NULL;
  while (*p && !strchr (",:}] \t\r\n", *p))
    p++;
  return p;
}

/* After a value inside a container: the next item, or NULL at the end. */
static const char *
next_item (const char *p, char close)
{
  p = p ? ws (p) : NULL;
  if (p == NULL || *p == close || *p != ',')
    return NULL;
  return ws (p + 1);
}

const char *
jscan_get (const char *obj, const char *key)
{
  size_t klen = strlen (key);
  const char *p = ws (obj), *end;

  if (*p != '{' || *(p = ws (p + 1)) == '}')
    return NULL;
  while (p && *p == '"') {
    if ((end = skip_string (p)) == NULL || *(end = ws (end)) != ':')
      return NULL;
    if ((size_t) (end - p) >= klen + 2 && memcmp (p + 1, key, klen) == 0 &&
        p[klen + 1] == '"')
      return ws (end + 1);
    p = next_item (skip_value (end + 1), '}');
  }
  return NULL;
}

const char *
jscan_path (const char *v, const char *path)
{
  char key[64];
  size_t n;

  while (v && *path) {
    n = strcspn (path, ".");
    if (n >= sizeof key)
      return NULL;
    memcpy (key, path, n);
    key[n] = '\0';
    v = jscan_get (v, key);
    path += n + (path[n] == '.');
  }
  return v;
}

const char *
jscan_index (const char *arr, unsigned i)
{
  const char *p = ws (arr);

  if (*p != '[' || *(p = ws (p + 1)) == ']')
    return NULL;
  for (; p && i > 0; i--)
    p = next_item (skip_value (p), ']');
  return p;
}

bool
jscan_i64 (const char *v, int64_t *out)
{
  char *end;
  long long n;

  if (v == NULL || !(*v == '-' || (*v >= '0' && *v <= '9')))
    return false;
  errno = 0;
  n = strtoll (v, &end, 10);
  if (errno || end == v || (*end && !strchr (",}] \t\r\n", *end)))
    return false;
  *out = n;
  return true;
}

bool
jscan_u64 (const char *v, uint64_t *out)
{
  char *end;
  unsigned long long n;

  if (v == NULL || *v < '0' || *v > '9')
    return false;
  errno = 0;
  n = strtoull (v, &end, 10);
  if (errno || (*end && !strchr (",}] \t\r\n", *end)))
    return false;
  *out = n;
  return true;
}

bool
jscan_bool (const char *v, bool *out)
{
  if (v && strncmp (v, "true", 4) == 0)
    *out = true;
  else if (v && strncmp (v, "false", 5) == 0)
    *out = false;
  else
    return false;
  return true;
}

/* The character an escape at p (after the backslash) stands for, and
 * its length in *n; -1 for one that is kept as written.
 */
static int
unescape (const char *p, size_t *n)
{
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  const char *at = strchr (from, *p);
  char hex[5];

  *n = 1;
  if (*p && at)
    return to[at - from];
  if (*p != 'u' || strspn (p + 1, "0123456789abcdefABCDEF") < 4)
    return -1;
  memcpy (hex, p + 1, 4);
  hex[4] = '\0';
  *n = 5;
  return strtol (hex, NULL, 16) < 0x80 ? (int) strtol (hex, NULL, 16) : -1;
}

bool
jscan_str (const char *v, char *buf, size_t len)
{
  size_t o = 0, n;
  int c;

  if (v == NULL || *v != '"' || skip_string (v) == NULL || len == 0)
    return false;
  for (v++; *v != '"'; v += n) {
    c = *v == '\\' ? unescape (v + 1, &n) : (n = 1, (unsigned char) *v);
    if (c < 0)
      c = '\\', n = 1;        /* kept: the backslash, then the rest */
    else if (*v == '\\')
      n++;
    if (o + 1 >= len)
      return false;
    buf[o++] = (char) c;
  }
  buf[o] = '\0';
  return true;
}

/* tests/unit/mdfx.c -- reading the md fixtures (see mdfx.h). */
#include <config.h>

#undef NDEBUG
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "tests/unit/mdfx.h"

/* In the order make-fixtures.sh makes them. */
const struct mdfx mdfx_all[] = {
  { "ls3-512", 3, false },
  { "ls3-64-bitmap", 3, true },
  { "ra4-512", 4, false },
  { "ra4-64-bitmap", 4, true },
  { "ls3-64-clean", 3, false },
  { "ls3-64-failed", 3, true },
  { "ls3-64-dirty", 3, true },
  { "big-1g", 1, false },
  { "big-4g-bitmap", 1, true },
  { "big-8g-bitmap", 1, true },
  { "big-8g1m", 1, false },
  { "big-16g-bitmap", 1, true },
  { "big-256m", 1, false },
  { "big-100g", 1, false },
  { "big-256g", 1, true },
  { "edge-64t-bitmap", 1, true },
  { "edge-64t-less-bitmap", 1, true },
};
const size_t mdfx_count = sizeof mdfx_all / sizeof mdfx_all[0];

const struct mdfx *
mdfx_get (const char *name)
{
  for (size_t i = 0; i < mdfx_count; i++)
    if (strcmp (mdfx_all[i].name, name) == 0)
      return &mdfx_all[i];
  cr_assert_fail ("no fixture %s in mdfx_all", name);
  return NULL;
}

static FILE *
open_fx (const char *name, const char *file)
{
  const char *dir = getenv ("R5_FIXTURES_DIR");
  char path[512];
  FILE *fp;

  snprintf (path, sizeof path, "%s/md/%s/%s", dir ? dir : FIXTURES_DIR,
            name, file);
  fp = fopen (path, "r");
  cr_assert_not_null (fp, "%s: %s", path, strerror (errno));
  return fp;
}

void
mdfx_read (const char *name, const char *file, void *buf, size_t len)
{
  FILE *fp = open_fx (name, file);
  size_t n = fread (buf, 1, len, fp);

  cr_assert_eq (n, len, "%s/%s: %zu bytes, want %zu", name, file, n, len);
  cr_assert_eq (fgetc (fp), EOF, "%s/%s: longer than %zu bytes",
                name, file, len);
  fclose (fp);
}

void
mdfx_block (const struct mdfx *fx, unsigned i, const char *what,
            uint8_t block[MDFX_BLOCK])
{
  char file[32];

  snprintf (file, sizeof file, "m%u.%s", i, what);
  mdfx_read (fx->name, file, block, MDFX_BLOCK);
}

char *
mdfx_text (const char *name, const char *file)
{
  FILE *fp = open_fx (name, file);
  char *text = NULL;
  size_t len = 0, n;

  do {
    text = realloc (text, len + 4096 + 1);
    cr_assert_not_null (text);
    n = fread (text + len, 1, 4096, fp);
    len += n;
  } while (n > 0);
  text[len] = '\0';
  fclose (fp);
  return text;
}

char *
mdfx_examine (const struct mdfx *fx, unsigned i, const char *what)
{
  char file[48];

  snprintf (file, sizeof file, "m%u.%s", i, what);
  return mdfx_text (fx->name, file);
}

uint64_t
mdfx_sectors (const struct mdfx *fx)
{
  char *text = mdfx_text (fx->name, "sectors");
  uint64_t v = strtoull (text, NULL, 10);

  free (text);
  cr_assert_gt (v, 0, "%s/sectors", fx->name);
  return v;
}

bool
mdfx_field (const char *text, const char *key, char *val, size_t len)
{
  size_t klen = strlen (key);

  for (const char *line = text; *line; ) {
    const char *end = strchrnul (line, '\n'), *p = line;

    while (*p == ' ')
      p++;
    if (strncmp (p, key, klen) == 0 && strncmp (p + klen, " : ", 3) == 0) {
      p += klen + 3;
      snprintf (val, len, "%.*s", (int) (end - p), p);
      return true;
    }
    line = *end ? end + 1 : end;
  }
  return false;
}

uint64_t
mdfx_num (const char *text, const char *key)
{
  char val[256], *p = val;

  cr_assert (mdfx_field (text, key, val, sizeof val),
             "mdadm printed no \"%s\" line", key);
  while (*p && !isdigit ((unsigned char) *p))
    p++;
  cr_assert (*p, "\"%s : %s\" has no number", key, val);
  if (p[0] == '0' && p[1] == 'x')
    return strtoull (p + 2, NULL, 16);
  return strtoull (p, NULL, 10);
}

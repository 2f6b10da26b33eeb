/* tools/check-files.c -- raid5ctl check --files: which files, or which
 * of the file system's own structures, the wrong stripes touch (check.h,
 * fsmap.h).
 *
 * Parity says a row of a stripe is wrong, not which chunk of the row: so
 * every data chunk's part of the row is a suspect, and each is explained.
 * The parity chunk itself holds no file's bytes.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raid/layout.h"
#include "tools/check.h"
#include "tools/json.h"

static void
keep (void *opaque, const struct fsmap_hit *h)
{
  struct check_files *f = opaque;
  struct fsmap_hit *nh, *k;

  if ((nh = realloc (f->hits, (f->n + 1) * sizeof *nh)) == NULL)
    return;
  f->hits = nh;
  k = &f->hits[f->n++];
  *k = *h;
  k->path = h->path ? strdup (h->path) : NULL;
  k->what = h->what ? strdup (h->what) : NULL;
}

/* The suspect bytes of mismatch m: in each data chunk of its stripe, the
 * rows from the first wrong unit to the last.
 */
static size_t
suspects (const struct r5_geom *g, const struct array_mismatch *m,
          unsigned tag, struct fsmap_range *out)
{
  uint64_t base = r5_stripe_member_off (g, m->stripe);
  uint64_t first = m->member_off - base;
  uint64_t len = m->last_off - m->member_off + R5_CMP_UNIT;

  for (unsigned d = 0; d < g->data_members; d++)
    out[d] = (struct fsmap_range) {
      .off = m->array_off + d * g->chunk + first, .len = len, .tag = tag,
    };
  return g->data_members;
}

int
check_files (struct array *a, uint64_t fs_off,
             const struct array_mismatch *list, unsigned n,
             struct check_files *f)
{
  const struct r5_geom *g = array_geom (a);
  struct fsmap_range *r = calloc ((size_t) n * g->data_members + 1,
                                  sizeof *r);
  size_t nr = 0;
  int ret;

  *f = (struct check_files) { .fs_off = fs_off };
  if (r == NULL) {
    snprintf (f->why, sizeof f->why, "out of memory");
    return -ENOMEM;
  }
  for (unsigned i = 0; i < n; i++)
    nr += suspects (g, &list[i], i, r + nr);
  ret = fsmap_explain (a, fs_off, r, nr, keep, f, f->fstype, f->why,
                       sizeof f->why);
  free (r);
  return ret;
}

void
check_files_free (struct check_files *f)
{
  for (size_t i = 0; i < f->n; i++) {
    free ((char *) f->hits[i].path);
    free ((char *) f->hits[i].what);
  }
  free (f->hits);
  f->hits = NULL;
  f->n = 0;
}

static const char *
kind_name (enum fsmap_kind k)
{
  switch (k) {
  case FSMAP_FILE: return "file";
  case FSMAP_FILE_MAP: return "file-map";
  case FSMAP_META: return "metadata";
  case FSMAP_FREE: return "free";
  case FSMAP_OUTSIDE: return "outside";
  }
  return "?";
}

void
check_files_text (const struct check_files *f, unsigned i)
{
  for (size_t k = 0; k < f->n; k++) {
    const struct fsmap_hit *h = &f->hits[k];

    if (h->tag != i)
      continue;
    switch (h->kind) {
    case FSMAP_FILE:
      printf ("    file %s (inode %" PRIu32 "): bytes [%" PRIu64 ", %" PRIu64
              ")\n", h->path, h->ino, h->file_off, h->file_off + h->len);
      break;
    case FSMAP_FILE_MAP:
      printf ("    block map of %s (inode %" PRIu32 "): %" PRIu64
              " bytes\n", h->path, h->ino, h->len);
      break;
    case FSMAP_META:
      printf ("    %s metadata: %s (%" PRIu64 " bytes)\n", f->fstype,
              h->what, h->len);
      break;
    case FSMAP_FREE:
      printf ("    free space: %" PRIu64 " bytes at array byte %" PRIu64
              "\n", h->len, h->array_off);
      break;
    case FSMAP_OUTSIDE:
      printf ("    outside the file system: %" PRIu64 " bytes at array "
              "byte %" PRIu64 "\n", h->len, h->array_off);
      break;
    }
  }
}

void
check_files_json (const struct check_files *f, unsigned i, struct json *j)
{
  tool_json_open (j, "files", '[');
  for (size_t k = 0; k < f->n; k++) {
    const struct fsmap_hit *h = &f->hits[k];

    if (h->tag != i)
      continue;
    tool_json_open (j, NULL, '{');
    tool_json_str (j, "kind", kind_name (h->kind));
    tool_json_u64 (j, "array_offset", h->array_off);
    tool_json_u64 (j, "length", h->len);
    if (h->kind == FSMAP_FILE || h->kind == FSMAP_FILE_MAP) {
      tool_json_str (j, "path", h->path);
      tool_json_u64 (j, "inode", h->ino);
    }
    if (h->kind == FSMAP_FILE)
      tool_json_u64 (j, "file_offset", h->file_off);
    if (h->kind == FSMAP_META)
      tool_json_str (j, "what", h->what);
    tool_json_close (j, '}');
  }
  tool_json_close (j, ']');
}

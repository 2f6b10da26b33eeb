/* tools/check-files.c -- raid5ctl check --files: which files, or which
 * of the file system's own structures, the wrong stripes touch (check.h,
 * fsmap.h).
 *
 * Parity says a row of a stripe is wrong, not which chunk of the row: so
 * every data chunk's part of the row is a suspect, and each is explained
 * -- unless an integrity record named the member, whose chunk alone is.
 * The parity chunk itself holds no file's bytes.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
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
  int named = m->csum_member >= 0
    ? r5_data_index (g, m->stripe, (unsigned) m->csum_member) : -2;
  size_t n = 0;

  for (unsigned d = 0; d < g->data_members; d++)
    if (named == -2 || named == (int) d)
      out[n++] = (struct fsmap_range) {
        .off = m->array_off + d * g->chunk + first, .len = len, .tag = tag,
      };
  return n;                   /* none: the parity chunk is the wrong one */
}

/* The pieces of r outside every file system of f: OUTSIDE hits. */
static void
outside (struct check_files *f, const struct fsmap_range *r)
{
  uint64_t at = r->off, end = r->off + r->len;

  while (at < end) {
    uint64_t stop = end;
    bool in = false;

    for (unsigned k = 0; k < f->nfs; k++) {
      const struct check_fs *c = &f->fs[k];

      if (at >= c->off && at < c->off + c->len)
        in = true, stop = c->off + c->len < stop ? c->off + c->len : stop;
      else if (c->off > at && c->off < stop)
        stop = c->off;
    }
    if (!in)
      keep (f, &(struct fsmap_hit) { .tag = r->tag, .kind = FSMAP_OUTSIDE,
                                     .array_off = at, .len = stop - at });
    at = stop;
  }
}

/* Explain the ranges' parts inside file system c. */
static void
explain_fs (const struct fsmap_src *src, struct check_fs *c, const struct fsmap_range *r,
            size_t nr, struct check_files *f)
{
  struct fsmap_range *in = calloc (nr + 1, sizeof *in);
  size_t n = 0;

  if (in == NULL) {
    snprintf (c->why, sizeof c->why, "out of memory");
    return;
  }
  for (size_t i = 0; i < nr; i++) {
    uint64_t lo = r[i].off > c->off ? r[i].off : c->off;
    uint64_t hi = r[i].off + r[i].len < c->off + c->len
      ? r[i].off + r[i].len : c->off + c->len;

    if (lo < hi)
      in[n++] = (struct fsmap_range) { lo, hi - lo, r[i].tag };
  }
  if ((n > 0 || c->number == 0) &&
      fsmap_explain (&(struct fsmap_query) { src, c->off, in, n, keep, f },
                     c->fstype, c->why, sizeof c->why) < 0) {
    if (c->why[0] == '\0')
      snprintf (c->why, sizeof c->why, "cannot be read");
    for (size_t i = 0; i < n; i++)    /* the byte ranges, then */
      keep (f, &(struct fsmap_hit) { .tag = in[i].tag,
                                     .kind = FSMAP_UNKNOWN,
                                     .array_off = in[i].off,
                                     .len = in[i].len });
  }
  free (in);
}

/* Where the file systems are: fs_off, or the partitions. */
static int
find_fs (const struct fsmap_src *src, uint64_t fs_off,
         struct check_files *f)
{
  uint64_t size = src->size;
  struct fsmap_part p[CHECK_FS_MAX];
  int n = 0;

  if (fs_off == CHECK_FS_AUTO &&
      (n = fsmap_partitions (src, p, CHECK_FS_MAX, f->pttype,
                             sizeof f->pttype)) < 0)
    return n;
  for (int k = 0; k < n; k++)
    f->fs[f->nfs++] = (struct check_fs) { .number = p[k].number,
                                          .off = p[k].off, .len = p[k].len };
  if (n == 0) {
    fs_off = fs_off == CHECK_FS_AUTO ? 0 : fs_off;
    f->fs[f->nfs++] = (struct check_fs) {
      .off = fs_off, .len = fs_off < size ? size - fs_off : 0 };
  }
  return 0;
}

int
check_files (const struct r5_geom *g, const struct fsmap_src *src,
             uint64_t fs_off, const struct array_mismatch *list, unsigned n,
             struct check_files *f)
{
  struct fsmap_range *r;
  size_t nr = 0;
  int ret;

  *f = (struct check_files) { .nfs = 0 };
  if ((ret = find_fs (src, fs_off, f)) < 0)
    return ret;
  r = calloc ((size_t) n * g->data_members + 1, sizeof *r);
  if (r == NULL)
    return -ENOMEM;
  for (unsigned i = 0; i < n; i++)
    nr += suspects (g, &list[i], i, r + nr);
  for (unsigned k = 0; k < f->nfs; k++)
    explain_fs (src, &f->fs[k], r, nr, f);
  for (size_t i = 0; i < nr; i++)
    outside (f, &r[i]);
  free (r);
  return 0;
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

/* The file system array byte off is in (the last one if none). */
static const struct check_fs *
fs_of (const struct check_files *f, uint64_t off)
{
  for (unsigned k = 0; k < f->nfs; k++)
    if (off >= f->fs[k].off && off < f->fs[k].off + f->fs[k].len)
      return &f->fs[k];
  return &f->fs[f->nfs - 1];
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
  case FSMAP_UNKNOWN: return "unknown";
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
      printf ("    %s metadata: %s (%" PRIu64 " bytes)\n",
              fs_of (f, h->array_off)->fstype, h->what, h->len);
      break;
    case FSMAP_FREE:
      printf ("    free space: %" PRIu64 " bytes at array byte %" PRIu64
              "\n", h->len, h->array_off);
      break;
    case FSMAP_UNKNOWN:
      printf ("    array bytes [%" PRIu64 ", %" PRIu64 ") (not "
              "understood)\n", h->array_off, h->array_off + h->len);
      break;
    case FSMAP_OUTSIDE:
      printf ("    outside %s: %" PRIu64 " bytes at array byte %" PRIu64
              "\n", f->pttype[0] ? "every partition" : "the file system",
              h->len, h->array_off);
      break;
    }
  }
}

void
check_files_text_head (const struct check_files *f)
{
  for (unsigned k = 0; k < f->nfs; k++) {
    const struct check_fs *c = &f->fs[k];

    if (c->number > 0)
      printf ("  partition %u (%s table), array bytes [%" PRIu64 ", %" PRIu64
              "): ", c->number, f->pttype, c->off, c->off + c->len);
    else
      printf ("  file system at array byte %" PRIu64 ": ", c->off);
    if (c->why[0])
      printf ("%s\n", c->why);
    else
      printf ("%s\n", c->fstype);
  }
}

void
check_files_json_head (const struct check_files *f, struct json *j)
{
  tool_json_str (j, "partition_table", f->pttype[0] ? f->pttype : NULL);
  tool_json_open (j, "file_systems", '[');
  for (unsigned k = 0; k < f->nfs; k++) {
    const struct check_fs *c = &f->fs[k];

    tool_json_open (j, NULL, '{');
    if (c->number > 0)
      tool_json_u64 (j, "partition", c->number);
    else
      tool_json_null (j, "partition");
    tool_json_u64 (j, "offset", c->off);
    tool_json_u64 (j, "length", c->len);
    tool_json_str (j, "type", c->fstype);
    tool_json_str (j, "error", c->why[0] ? c->why : NULL);
    tool_json_close (j, '}');
  }
  tool_json_close (j, ']');
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

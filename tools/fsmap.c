/* tools/fsmap.c -- what an ext2/3/4 file system keeps at given array bytes
 * (fsmap.h).  As debugfs does it: a block is the file system's own when a
 * group's superblock, descriptors, bitmaps or inode table lie there
 * (icheck leaves those out too); free when the block bitmap says so;
 * else the inode whose block map holds it (icheck: every inode's blocks
 * walked once), named by a walk of every directory (ncheck).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ext2fs/ext2fs.h>
#include <ext2fs/ext2_err.h>

#include "array/array.h"
#include "tools/fsmap.h"
#include "tools/fsmap-io.h"

/* One block of the file system that some range touches. */
struct want {
  blk64_t blk;
  unsigned range;             /* index into the ranges */
  uint64_t array_off, len;    /* the range's bytes in this block */
  enum fsmap_kind kind;
  uint32_t ino;
  e2_blkcnt_t cnt;            /* FILE: the block's index in the file */
  char what[64];              /* META */
};

struct map {
  ext2_filsys fs;
  uint64_t fs_off, bs;
  struct want *w;             /* in order of range and offset */
  size_t n;
  struct want **by_blk;       /* the same, sorted by block */
  uint32_t cur_ino;           /* the inode being walked */
  char **names;               /* per want: its inode's path */
};

static int
by_blk (const void *x, const void *y)
{
  blk64_t a = (*(struct want *const *) x)->blk;
  blk64_t b = (*(struct want *const *) y)->blk;

  return a < b ? -1 : a > b;
}

/* The wants of the n ranges, one per block touched (a range's part of
 * each); blocks past the file system's end are OUTSIDE.
 */
static int
make_wants (struct map *m, const struct fsmap_range *r, size_t n)
{
  size_t cap = 0;

  for (size_t i = 0; i < n; i++) {
    uint64_t at = r[i].off, end = r[i].off + r[i].len;

    while (at < end) {
      uint64_t rel = at >= m->fs_off ? at - m->fs_off : 0;
      uint64_t blk_end = m->fs_off + (rel / m->bs + 1) * m->bs;
      uint64_t stop = blk_end < end ? blk_end : end;
      struct want *w;

      if (m->n == cap) {
        struct want *nw = realloc (m->w, (cap = cap * 2 + 16) * sizeof *nw);

        if (nw == NULL)
          return -ENOMEM;
        m->w = nw;
      }
      w = &m->w[m->n++];
      *w = (struct want) { .blk = rel / m->bs, .range = i, .array_off = at,
                           .len = stop - at, .kind = FSMAP_FREE };
      if (at < m->fs_off || w->blk >= ext2fs_blocks_count (m->fs->super))
        w->kind = FSMAP_OUTSIDE;
      at = stop;
    }
  }
  return 0;
}

/* Is b a group's superblock, descriptors, bitmap or inode table? */
static bool
meta_name (ext2_filsys fs, blk64_t b, char *what, size_t len)
{
  unsigned ipb = fs->blocksize / EXT2_INODE_SIZE (fs->super);

  for (dgrp_t g = 0; g < fs->group_desc_count; g++) {
    blk64_t sb, old, new, it = ext2fs_inode_table_loc (fs, g);
    blk_t used;

    if (ext2fs_block_bitmap_loc (fs, g) == b)
      return snprintf (what, len, "block bitmap of group %u", g), true;
    if (ext2fs_inode_bitmap_loc (fs, g) == b)
      return snprintf (what, len, "inode bitmap of group %u", g), true;
    if (b >= it && b < it + fs->inode_blocks_per_group) {
      uint64_t first = (uint64_t) g * fs->super->s_inodes_per_group +
        (b - it) * ipb + 1;

      snprintf (what, len, "inode table of group %u (inodes %" PRIu64
                "-%" PRIu64 ")", g, first, first + ipb - 1);
      return true;
    }
    if (ext2fs_super_and_bgd_loc2 (fs, g, &sb, &old, &new, &used) != 0)
      continue;
    if (b == sb || (g == 0 && b < fs->super->s_first_data_block))
      return snprintf (what, len, "superblock of group %u", g), true;
    if (old && b >= old && b < old + fs->desc_blocks)
      return snprintf (what, len, "group descriptors (copy in group %u)",
                       g), true;
    if (old && b >= old + fs->desc_blocks &&
        b < old + fs->desc_blocks + fs->super->s_reserved_gdt_blocks)
      return snprintf (what, len, "reserved group descriptor blocks (group "
                       "%u)", g), true;
    if (new && b == new)
      return snprintf (what, len, "group descriptors (meta_bg, group %u)",
                       g), true;
  }
  return false;
}

static void
classify (struct map *m)
{
  for (size_t i = 0; i < m->n; i++) {
    struct want *w = &m->w[i];

    if (w->kind == FSMAP_OUTSIDE)
      continue;
    if (meta_name (m->fs, w->blk, w->what, sizeof w->what))
      w->kind = FSMAP_META;
    else if (ext2fs_test_block_bitmap2 (m->fs->block_map, w->blk))
      w->kind = FSMAP_META;     /* in use: an owner is looked for */
    else
      w->kind = FSMAP_FREE;
    if (w->kind == FSMAP_META && w->what[0] == '\0')
      snprintf (w->what, sizeof w->what, "in use, no inode found holding "
                "it");
  }
}

/* The wants of block b: the first in by_blk, or NULL. */
static struct want **
find (struct map *m, blk64_t b)
{
  size_t lo = 0, hi = m->n;

  while (lo < hi) {
    size_t mid = (lo + hi) / 2;

    if (m->by_blk[mid]->blk < b)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < m->n && m->by_blk[lo]->blk == b ? &m->by_blk[lo] : NULL;
}

/* A reserved inode's blocks: what they are to the file system. */
static const char *
reserved_name (uint32_t ino)
{
  switch (ino) {
  case EXT2_BAD_INO: return "bad blocks list (inode 1)";
  case EXT2_BOOT_LOADER_INO: return "boot loader (inode 5)";
  case EXT2_RESIZE_INO: return "reserved group descriptor blocks (resize "
                               "inode 7)";
  case EXT2_JOURNAL_INO: return "journal (inode 8)";
  default: return NULL;
  }
}

static int
on_block (ext2_filsys fs, blk64_t *blocknr, e2_blkcnt_t cnt, blk64_t ref,
          int ref_off, void *priv)
{
  struct map *m = priv;
  struct want **p = find (m, *blocknr);
  const char *res = reserved_name (m->cur_ino);

  (void) fs; (void) ref; (void) ref_off;
  for (; p && p < m->by_blk + m->n && (*p)->blk == *blocknr; p++) {
    struct want *w = *p;

    if (w->kind != FSMAP_META || strncmp (w->what, "in use", 6) != 0)
      continue;
    if (res != NULL) {
      snprintf (w->what, sizeof w->what, "%s", res);
      continue;
    }
    w->kind = cnt < 0 ? FSMAP_FILE_MAP : FSMAP_FILE;
    w->ino = m->cur_ino;
    w->cnt = cnt;
  }
  return 0;
}

/* Every in-use inode's blocks, walked once (icheck).  Directories are
 * remembered for the names.
 */
static int
walk_inodes (struct map *m, ext2_ino_t **dirs, size_t *ndirs)
{
  ext2_inode_scan scan;
  struct ext2_inode inode;
  ext2_ino_t ino;
  size_t cap = 0;
  errcode_t e;

  if ((e = ext2fs_open_inode_scan (m->fs, 0, &scan)) != 0)
    return -EIO;
  while ((e = ext2fs_get_next_inode (scan, &ino, &inode)) == 0 && ino) {
    if (inode.i_links_count == 0 && ino >= EXT2_FIRST_INO (m->fs->super))
      continue;
    if (LINUX_S_ISDIR (inode.i_mode)) {
      if (*ndirs == cap) {
        ext2_ino_t *nd = realloc (*dirs, (cap = cap * 2 + 64) * sizeof *nd);

        if (nd == NULL)
          break;
        *dirs = nd;
      }
      (*dirs)[(*ndirs)++] = ino;
    }
    if (!ext2fs_inode_has_valid_blocks2 (m->fs, &inode))
      continue;
    m->cur_ino = ino;
    ext2fs_block_iterate3 (m->fs, ino, BLOCK_FLAG_READ_ONLY, NULL, on_block,
                           m);
  }
  ext2fs_close_inode_scan (scan);
  return e == 0 || e == EXT2_ET_BAD_BLOCK_IN_INODE_TABLE ? 0 : -EIO;
}

/* Names (ncheck): a directory entry naming a wanted inode gives it the
 * path of that directory and its name.
 */
struct naming {
  struct map *m;
  ext2_ino_t dir;
};

/* ext2fs_dir_iterate's callback (its five parameters; the directory is
 * in priv: nm->dir).
 */
static int
on_dirent (struct ext2_dir_entry *d, int off, int bs, char *buf, void *priv)
{
  struct naming *nm = priv;
  struct map *m = nm->m;
  int len = ext2fs_dirent_name_len (d);
  char *dirpath = NULL;

  (void) off; (void) bs; (void) buf;
  if ((len == 1 && d->name[0] == '.') ||
      (len == 2 && d->name[0] == '.' && d->name[1] == '.'))
    return 0;
  for (size_t i = 0; i < m->n; i++) {
    if ((m->w[i].kind != FSMAP_FILE && m->w[i].kind != FSMAP_FILE_MAP) ||
        m->w[i].ino != d->inode || m->names[i] != NULL)
      continue;
    if (dirpath == NULL &&
        ext2fs_get_pathname (m->fs, nm->dir, 0, &dirpath) != 0)
      return 0;
    if (asprintf (&m->names[i], "%s/%.*s", strcmp (dirpath, "/") ? dirpath
                                                                 : "", len,
                  d->name) < 0)
      m->names[i] = NULL;
  }
  ext2fs_free_mem (&dirpath);
  return 0;
}

static void
name_all (struct map *m, const ext2_ino_t *dirs, size_t ndirs)
{
  for (size_t i = 0; i < ndirs; i++) {
    struct naming nm = { m, dirs[i] };

    ext2fs_dir_iterate (m->fs, dirs[i], 0, NULL, on_dirent, &nm);
  }
  for (size_t i = 0; i < m->n; i++)
    if ((m->w[i].kind == FSMAP_FILE || m->w[i].kind == FSMAP_FILE_MAP) &&
        m->names[i] == NULL &&
        asprintf (&m->names[i], m->w[i].ino == EXT2_ROOT_INO ? "/"
                  : "(inode %" PRIu32 ", no name found)", m->w[i].ino) < 0)
      m->names[i] = NULL;
}

/* May want j continue the hit of want i? */
static bool
continues (const struct map *m, size_t i, size_t j)
{
  const struct want *a = &m->w[i], *b = &m->w[j];

  if (a->range != b->range || a->kind != b->kind ||
      a->array_off + a->len != b->array_off)
    return false;
  switch (a->kind) {
  case FSMAP_FILE: return a->ino == b->ino && b->cnt == a->cnt + 1;
  case FSMAP_FILE_MAP: return a->ino == b->ino;
  case FSMAP_META: return strcmp (a->what, b->what) == 0;
  default: return true;
  }
}

static void
emit (const struct map *m, const struct fsmap_range *r, fsmap_fn fn,
      void *opaque)
{
  for (size_t i = 0, j; i < m->n; i = j) {
    const struct want *w = &m->w[i];
    struct fsmap_hit h = {
      .tag = r[w->range].tag, .kind = w->kind, .array_off = w->array_off,
      .len = w->len, .ino = w->ino, .path = m->names[i], .what = w->what,
    };

    if (w->kind == FSMAP_FILE)
      h.file_off = (uint64_t) w->cnt * m->bs +
        (w->array_off - m->fs_off) % m->bs;
    for (j = i + 1; j < m->n && continues (m, j - 1, j); j++)
      h.len += m->w[j].len;
    fn (opaque, &h);
  }
}

static void
fstype_of (ext2_filsys fs, char *fstype)
{
  const char *t = "ext2";

  if (ext2fs_has_feature_journal (fs->super))
    t = "ext3";
  if (ext2fs_has_feature_extents (fs->super) ||
      ext2fs_has_feature_64bit (fs->super) ||
      ext2fs_has_feature_flex_bg (fs->super))
    t = "ext4";
  snprintf (fstype, 16, "%s", t);
}

static int
explain (struct map *m, const struct fsmap_query *q, char *why,
         size_t why_len)
{
  ext2_ino_t *dirs = NULL;
  size_t ndirs = 0;
  int ret;

  if (ext2fs_read_bitmaps (m->fs) != 0) {
    snprintf (why, why_len, "cannot read the file system's bitmaps");
    return -EIO;
  }
  if ((ret = make_wants (m, q->r, q->n)) < 0 ||
      (m->by_blk = calloc (m->n + 1, sizeof *m->by_blk)) == NULL ||
      (m->names = calloc (m->n + 1, sizeof *m->names)) == NULL) {
    snprintf (why, why_len, "out of memory");
    return -ENOMEM;
  }
  for (size_t i = 0; i < m->n; i++)
    m->by_blk[i] = &m->w[i];
  qsort (m->by_blk, m->n, sizeof *m->by_blk, by_blk);
  classify (m);
  if ((ret = walk_inodes (m, &dirs, &ndirs)) < 0)
    snprintf (why, why_len, "cannot read the inode table");
  else {
    name_all (m, dirs, ndirs);
    emit (m, q->r, q->fn, q->opaque);
  }
  free (dirs);
  return ret;
}

int
fsmap_explain (const struct fsmap_query *q, char *fstype, char *why,
               size_t why_len)
{
  uint64_t fs_off = q->fs_off;
  struct map m = { .fs_off = fs_off };
  io_manager io = fsmap_io_use (q->src, fs_off);
  errcode_t e;
  int ret;

  static bool messages;

  if (!messages) {              /* com_err's texts for libext2fs' codes */
    initialize_ext2_error_table ();
    messages = true;
  }
  snprintf (fstype, 16, "unknown");
  e = ext2fs_open2 ("raid5", NULL, EXT2_FLAG_64BITS |
                    EXT2_FLAG_IGNORE_CSUM_ERRORS, 0, 0, io, &m.fs);
  if (e != 0) {
    snprintf (why, why_len, "no ext2, ext3 or ext4 file system at array "
              "byte %" PRIu64 " (%s)", fs_off, error_message (e));
    return -ENOENT;
  }
  fstype_of (m.fs, fstype);
  m.bs = m.fs->blocksize;
  ret = explain (&m, q, why, why_len);
  for (size_t i = 0; m.names && i < m.n; i++)
    free (m.names[i]);
  free (m.names);
  free (m.by_blk);
  free (m.w);
  ext2fs_close_free (&m.fs);
  return ret;
}

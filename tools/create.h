/* tools/create.h -- raid5ctl create, internal: the plan that create.c
 * (options, checks, parity sync) and create-md.c (superblock and bitmap
 * bytes, writing them, the summary) share.
 *
 * A plan is filled in order by create.c: disks opened and locked, sizes
 * chosen and checked, then create_fill_sb(); only then create_write()
 * touches the disks.  All on one thread.
 */
#ifndef TOOLS_CREATE_H
#define TOOLS_CREATE_H

#include <stdbool.h>
#include <stdint.h>

#include "io/member.h"
#include "raid/geom.h"
#include "raid/mdbitmap.h"
#include "raid/mdsb.h"
#include "io/signature.h"

/* mdadm puts the bitmap 8 sectors after a v1.2 superblock: byte 8192. */
#define CREATE_BITMAP_SECTORS MD_BITMAP_SB_OFFSET
#define CREATE_BITMAP_OFFSET 8192u

enum create_bitmap {
  CREATE_BITMAP_AUTO,         /* internal if members hold > 100 GiB */
  CREATE_BITMAP_INTERNAL,
  CREATE_BITMAP_NONE,
};

/* mdadm's --consistency-policy names.  AUTO: as --bitmap says. */
enum create_policy {
  CREATE_POLICY_AUTO,
  CREATE_POLICY_RESYNC,
  CREATE_POLICY_BITMAP,
  CREATE_POLICY_PPL,
};

/* The partial parity log area, as mdadm's write_init_super1 places it
 * for v1.2: 8 sectors after the superblock, 1 MiB.
 */
#define CREATE_PPL_OFFSET 8192u       /* bytes from the member start */

struct create_opts {
  uint64_t chunk;             /* bytes */
  enum r5_layout layout;
  const char *name;           /* NULL: the default (see create.c) */
  bool assume_clean;
  enum create_bitmap bitmap;
  enum create_policy policy;
  uint64_t data_offset;       /* bytes; 0: mdadm's default */
  bool force;
  unsigned n;                 /* disks, R5_MIN_MEMBERS..R5_MAX_MEMBERS */
  char **disks;               /* in slot order; argv's */
  int missing;                /* the slot given as "missing" (created
                               * degraded, as mdadm --create does), or -1 */
};

/* Does slot i have a disk (not "missing")? */
static inline bool
create_has_disk (const struct create_opts *o, unsigned i)
{
  return (int) i != o->missing;
}

struct create_plan {
  const struct create_opts *opts;
  struct io_member m[R5_MAX_MEMBERS];   /* open and locked until written;
                                         * the missing slot's never open */
  uint64_t doff;              /* data offset, sectors */
  uint64_t size;              /* component size, sectors (chunk multiple) */
  bool bitmap;
  bool ppl;                   /* a partial parity log (policy ppl) */
  struct md_bitmap_sb bm;
  uint64_t bm_bytes;          /* on-disk bitmap area, 4 KiB multiple */
  struct md_sb sb;            /* array-wide fields; per-member at write */
  uint8_t dev_uuid[R5_MAX_MEMBERS][16];
  /* With --force: the magic of each signature found (io/signature.h),
   * zeroed before the new metadata is written.
   */
  struct create_wipe {
    uint64_t offset;          /* bytes */
    uint32_t len;             /* bytes, <= IO_SIG_MAGIC_MAX <= MD_SB_BLOCK */
  } wipe[R5_MAX_MEMBERS][IO_SIG_MAX];
  unsigned nwipe[R5_MAX_MEMBERS];
  void *block;                /* MD_SB_BLOCK bytes of scratch, aligned */
};

/* A zeroed plan for o (members not open), or NULL without memory. */
struct create_plan *create_plan_new (const struct create_opts *o)
  __attribute__((nonnull));
/* Frees p (members must be closed); NULL is fine. */
void create_plan_free (struct create_plan *p);

/* The superblock fields: random UUIDs, name, times, geometry from the
 * plan.  Returns 0, or TOOL_FAIL (message printed).
 */
int create_fill_sb (struct create_plan *p) __attribute__((nonnull));

/* Zero the magics of the plan's old signatures, write the bitmap (if
 * any) or the partial parity log area (zeroed, one empty header, as
 * mdadm's write_init_ppl1) to every member, then every superblock, each
 * followed by fdatasync.  Returns 0, or TOOL_FAIL (message printed).
 */
int create_write (struct create_plan *p) __attribute__((nonnull));

/* What was made, and how to serve it, on stdout.  mismatches: sectors the
 * parity sync rewrote.
 */
void create_summary (const struct create_plan *p, uint64_t mismatches)
  __attribute__((nonnull));

#endif /* TOOLS_CREATE_H */

/* array/ppl.c -- the partial parity log of an array that keeps one
 * (raid/ppl.h for md's format).  For now: a member joining such an array
 * gets its log area as mdadm's write_init_ppl1 leaves it (zeroes, one
 * empty header), so that a disk once in the array cannot bring back a
 * valid header of old entries for md to replay after a crash.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/internal.h"
#include "raid/ppl.h"

int
ppl_init_member (struct array *a, unsigned slot, struct array_err *err)
{
  const struct md_sb *sb = &a->meta.live.common;
  const struct io_member *m = &a->members[slot];
  uint64_t at = (uint64_t) ((int64_t) MD_SB_SECTOR + sb->ppl_offset) * 512;
  size_t len = (size_t) sb->ppl_size * 512;
  void *area;
  int r;

  if (!(sb->feature_map & (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS)))
    return 0;
  if (len < PPL_HEADER_SIZE || posix_memalign (&area, 4096, len) != 0) {
    array_set_err (err, "slot %u (%s): no memory for its partial parity "
                   "log area", slot, m->path);
    return -ENOMEM;
  }
  memset (area, 0, len);
  ppl_header_encode (&(struct ppl_header) {
      .signature = ppl_signature (sb->set_uuid) }, area);
  if ((r = io_member_pwrite (m, area, len, at)) < 0 ||
      (r = io_member_sync (m)) < 0)
    array_set_err (err, "slot %u (%s): write of its partial parity log "
                   "area at %" PRIu64 ": %s", slot, m->path, at,
                   strerror (-r));
  free (area);
  return r;
}

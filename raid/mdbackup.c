/* raid/mdbackup.c -- mdadm's reshape backup file header (mdbackup.h). */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "raid/le.h"
#include "raid/mdbackup.h"

static const char magic1[16] = "md_backup_data-1";
static const char magic2[16] = "md_backup_data-2";

/* mdadm's bsb_csum: csum = (csum << 3) + buf[0], len times (buf[0], not
 * buf[i]: a slip mdadm has always had, and checks by).  int arithmetic
 * wrapping as the machines mdadm runs on wrap it.
 */
static uint32_t
bsb_csum (const uint8_t *buf, unsigned len)
{
  uint32_t csum = 0;

  for (unsigned i = 0; i < len; i++)
    csum = (csum << 3) + (uint32_t) (int32_t) (int8_t) buf[0];
  return csum;
}

void
md_backup_encode (const struct md_backup *b, void *block)
{
  uint8_t *p = block;

  memset (p, 0, MD_BACKUP_HEADER);
  memcpy (p, magic1, 16);
  memcpy (p + 16, b->set_uuid, 16);
  le_put (p + 32, 8, b->mtime);
  le_put (p + 40, 8, b->devstart);
  le_put (p + 48, 8, b->arraystart);
  le_put (p + 56, 8, b->length);
  le_put (p + 64, 4, bsb_csum (p, 64));
  le_put (p + 72, 8, b->devstart2);
}

int
md_backup_decode (const void *block, const uint8_t set_uuid[16],
                  struct md_backup *b, char *why, size_t len)
{
  const uint8_t *p = block;

  memset (b, 0, sizeof *b);
  b->two = memcmp (p, magic2, 16) == 0;
  if (memcmp (p, magic1, 16) != 0 && !b->two)
    return le_bad (why, len, -EINVAL, "no backup header (mdadm's "
                   "md_backup_data) at its start");
  if (le_get (p + 64, 4) != bsb_csum (p, 64) ||
      (b->two && le_get (p + 96, 4) != bsb_csum (p, 96)))
    return le_bad (why, len, -EINVAL, "its backup header's checksum fails");
  if (memcmp (p + 16, set_uuid, 16) != 0)
    return le_bad (why, len, -EINVAL, "it is the backup of another array");
  memcpy (b->set_uuid, p + 16, 16);
  b->mtime = le_get (p + 32, 8);
  b->devstart = le_get (p + 40, 8);
  b->arraystart = le_get (p + 48, 8);
  b->length = le_get (p + 56, 8);
  if (b->two) {
    b->devstart2 = le_get (p + 72, 8);
    b->arraystart2 = le_get (p + 80, 8);
    b->length2 = le_get (p + 88, 8);
  }
  return 0;
}

unsigned
md_backup_restore_plan (const struct md_backup *b, uint64_t progress,
                        struct md_backup_section s[2], uint64_t *after)
{
  struct md_backup_section all[2] = {
    { b->devstart * 512, b->arraystart, b->length },
    { (b->devstart + b->devstart2) * 512, b->arraystart2, b->length2 },
  };
  uint64_t lo = UINT64_MAX, hi = 0;
  unsigned n = 0;
  bool needed = false;

  *after = progress;
  for (unsigned i = 0; i < (b->two ? 2u : 1u); i++) {
    const struct md_backup_section *x = &all[i];

    if (x->length == 0)
      continue;
    needed |= x->arraystart + x->length >= progress;
    lo = x->arraystart < lo ? x->arraystart : lo;
    hi = x->arraystart + x->length > hi ? x->arraystart + x->length : hi;
    s[n++] = *x;
  }
  if (!needed)
    return 0;
  if (progress >= lo && progress <= hi)
    *after = hi;
  return n;
}

bool
md_backup_fresh (const struct md_backup *b, uint64_t utime)
{
  return utime <= b->mtime + 2 * 60 * 60 && utime + 10 * 60 >= b->mtime;
}

/* array/guard.c -- nothing that holds data is overwritten without
 * --force (see guard.h).
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array/guard.h"
#include "array/object.h"

bool
array_sig_is_md (const struct io_sig *s)
{
  return strcmp (s->type, "linux_raid_member") == 0;
}

/* Hex digits in groups of 8 joined by ':' (at out[8], [17], [26]). */
void
array_sig_md_uuid (const struct io_sig *s, char out[36])
{
  size_t n = 0;

  for (const char *c = s->uuid; *c != '\0' && n < 35; c++) {
    if (!isxdigit ((unsigned char) *c))
      continue;
    if (n % 9 == 8)
      out[n++] = ':';
    out[n++] = (char) tolower ((unsigned char) *c);
  }
  out[n] = '\0';
}

static const char *
kind_noun (enum io_sig_kind kind)
{
  switch (kind) {
  case IO_SIG_FILESYSTEM: return "file system";
  case IO_SIG_RAID: return "RAID or volume manager signature";
  case IO_SIG_CRYPTO: return "encrypted volume";
  case IO_SIG_PARTITION_TABLE: return "partition table";
  case IO_SIG_OTHER: break;
  }
  return "signature";
}

/* "an ext4", "an xfs", "an LVM2_member", but "a gpt", "a swap". */
static const char *
article (const char *word)
{
  bool initialism = word[0] != '\0' && isupper ((unsigned char) word[1]);

  if (word[0] == '\0')
    return "a";
  if (strchr ("aeiouAEIOUx", word[0]) ||
      (initialism && strchr ("FHLMNRSX", word[0])))
    return "an";
  return "a";
}

const char *
array_sig_describe (const struct io_sig *s, char *buf, size_t len)
{
  char label[80] = "", uuid[56] = "";

  if (s->label[0] != '\0')
    snprintf (label, sizeof label, "label '%s', ", s->label);
  if (s->uuid[0] != '\0')
    snprintf (uuid, sizeof uuid, "UUID %s, ", s->uuid);
  snprintf (buf, len, "%s %s %s (%s%sat byte %" PRIu64 ")", article (s->type),
            s->type, kind_noun (s->kind), label, uuid, s->offset);
  return buf;
}

/* The one line for a disk holding signatures: the first that libblkid
 * found (an md superblock says which array it is), and how many more.
 */
static int
refuse (const char *name, const struct io_sig_list *l, const char *override,
        struct array_err *err)
{
  const struct io_sig *s = &l->sig[0];
  const char *them = l->n > 1 ? "them" : "it";
  char what[256], more[40] = "", uuid[36], label[80] = "";

  if (l->n > 1)
    snprintf (more, sizeof more, "; %u more signature%s", l->n - 1,
              l->n > 2 ? "s" : "");
  if (!array_sig_is_md (s)) {
    array_set_err (err, "%s holds %s%s (%s overwrites %s)", name,
                   array_sig_describe (s, what, sizeof what), more, override,
                   them);
    return -EEXIST;
  }
  array_sig_md_uuid (s, uuid);
  if (s->label[0] != '\0')
    snprintf (label, sizeof label, ", name '%s'", s->label);
  array_set_err (err, "%s already holds an md superblock (v%s, at byte %"
                 PRIu64 "): it belongs to array UUID %s%s%s (%s overwrites "
                 "%s)", name, s->version, s->offset, uuid, label, more,
                 override, them);
  return -EEXIST;
}

/* Is s the array's own superblock (the v1.2 one this array writes)? */
static bool
own (const struct io_sig *s, const char *own_uuid)
{
  char theirs[36];

  if (own_uuid == NULL || own_uuid[0] == '\0' || !array_sig_is_md (s) ||
      strcmp (s->version, "1.2") != 0)
    return false;
  array_sig_md_uuid (s, theirs);
  return strcasecmp (theirs, own_uuid) == 0;
}

int
array_guard_probe (const struct io_member *m, const char *name,
                   const struct array_guard *g, struct io_sig_list *found,
                   struct array_err *err)
{
  unsigned k = 0;
  int r = io_member_signatures (m, found);

  if (r == -E2BIG) {
    array_set_err (err, "%s holds more than %u signatures: wipe them first "
                   "(wipefs -a)", name, IO_SIG_MAX);
    return r;
  }
  if (r < 0) {
    array_set_err (err, "%s: cannot look for signatures on it: %s", name,
                   strerror (-r));
    return r;
  }
  for (unsigned i = 0; i < found->n; i++)
    if (!own (&found->sig[i], g->own_uuid))
      found->sig[k++] = found->sig[i];
  found->n = k;
  if (found->n > 0 && !g->force)
    return refuse (name, found, g->override, err);
  return 0;
}

int
array_guard_path (const char *path, const char *name,
                  const struct array_guard *g, struct io_sig_list *found,
                  struct array_err *err)
{
  struct io_member m;
  int r;

  io_member_init (&m);
  if ((r = io_member_open_opts (&m, path, &(struct io_open_opts) {
                                   .tls = g->tls, .read_only = true })) < 0) {
    array_set_err (err, "%s: cannot open: %s", path, io_strerror (r));
    io_member_close (&m);
    return r;
  }
  r = array_guard_probe (&m, name, g, found, err);
  io_member_close (&m);
  return r;
}

/* Zero [off, off+len) of m in whole units of its O_DIRECT alignment
 * (512 bytes at least): read, clear, write back.
 */
static int
zero_range (const struct io_member *m, uint64_t off, uint32_t len)
{
  uint64_t unit = m->dio_align > 512 ? m->dio_align : 512;
  uint64_t from = off / unit * unit;
  uint64_t to = (off + len + unit - 1) / unit * unit;
  void *buf;
  int r;

  to = to > m->size ? m->size : to;
  if (to <= from || posix_memalign (&buf, unit, (size_t) (to - from)) != 0)
    return to <= from ? 0 : -ENOMEM;
  if ((r = io_member_pread (m, buf, (size_t) (to - from), from)) == 0) {
    memset ((char *) buf + (off - from), 0,
            off + len > to ? (size_t) (to - off) : len);
    r = io_member_pwrite (m, buf, (size_t) (to - from), from);
  }
  free (buf);
  return r;
}

int
array_guard_wipe (const struct io_member *m, const struct io_sig_list *found,
                  uint64_t keep_from, uint64_t keep_to, struct array_err *err)
{
  for (unsigned i = 0; i < found->n; i++) {
    const struct io_sig *s = &found->sig[i];
    int r;

    if (s->len == 0 ||
        (s->offset + s->len > keep_from && s->offset < keep_to))
      continue;
    if ((r = zero_range (m, s->offset, s->len)) < 0) {
      array_set_err (err, "%s: wiping the %s it held at byte %" PRIu64
                     ": %s", m->path, s->type, s->offset, strerror (-r));
      return r;
    }
  }
  return 0;
}

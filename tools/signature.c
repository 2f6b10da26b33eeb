/* tools/signature.c -- the signatures on a disk in raid5ctl's words
 * (see signature.h).
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/raid5ctl.h"
#include "tools/signature.h"

bool
sig_is_md (const struct io_sig *s)
{
  return strcmp (s->type, "linux_raid_member") == 0;
}

/* Hex digits in groups of 8 joined by ':' (at out[8], [17], [26]). */
void
sig_md_uuid (const struct io_sig *s, char out[36])
{
  size_t n = 0;

  for (const char *c = s->uuid; *c != '\0' && n < 35; c++) {
    if (!isxdigit ((unsigned char) *c))
      continue;
    if (n % 9 == 8)
      out[n++] = ':';
    out[n++] = *c;
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
sig_describe (const struct io_sig *s, char *buf, size_t len)
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
int
sig_refuse (const char *disk, const struct io_sig_list *l)
{
  const struct io_sig *s = &l->sig[0];
  const char *them = l->n > 1 ? "them" : "it";
  char what[256], more[40] = "", uuid[36], name[80] = "";

  if (l->n > 1)
    snprintf (more, sizeof more, "; %u more signature%s", l->n - 1,
              l->n > 2 ? "s" : "");
  if (!sig_is_md (s))
    return tool_error ("%s holds %s%s (--force overwrites %s)", disk,
                       sig_describe (s, what, sizeof what), more, them);
  sig_md_uuid (s, uuid);
  if (s->label[0] != '\0')
    snprintf (name, sizeof name, ", name '%s'", s->label);
  return tool_error ("%s already holds an md superblock (v%s, at byte %"
                     PRIu64 "): it belongs to array UUID %s%s%s (--force "
                     "overwrites %s)", disk, s->version, s->offset, uuid,
                     name, more, them);
}

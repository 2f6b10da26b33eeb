/* tools/examine.h -- raid5ctl examine, internal: what examine.c finds on
 * one disk, which examine-text.c prints as mdadm does and examine-json.c
 * as JSON.
 */
#ifndef TOOLS_EXAMINE_H
#define TOOLS_EXAMINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/member.h"
#include "raid/badblocks.h"
#include "raid/mdbitmap.h"
#include "raid/mdsb.h"

struct exam {
  const char *path;
  uint64_t size;              /* bytes */
  int err;                    /* -errno if the disk could not be read */
  const char *err_what;       /* "cannot open", "read at 4096", ... */
  char err_why[512];          /* err in words, as it was found out (an
                               * NBD member's TLS handshake: io_strerror) */
  bool has_sb;                /* md's magic at byte 4096 */
  uint32_t magic;             /* what is there, superblock or not */
  const char *other;          /* without: an md superblock of another */
  uint64_t other_offset;      /* version ("1.0"), or NULL, and where */
  char other_version[16];     /* what other points to */
  /* With has_sb: every field as stored, even if the superblock is
   * corrupt (see examine.c), and the checksum stored and computed.
   */
  struct md_sb sb;
  uint32_t major;
  uint32_t csum, csum_expected;
  /* Bitmap (feature bit 1): header and how many of its bits are set. */
  bool has_bitmap;
  int bm_err;                 /* 0, or why the bitmap cannot be used */
  char bm_why[160];
  struct md_bitmap_sb bm;
  uint64_t bm_bits, bm_set;
  /* Bad-block log (examine-bb.c): whether mdadm sees one configured;
   * with feature 0x8 its words as stored (bb_list, bb_words: what mdadm
   * --examine-badblocks lists) and the table they make (ranges, bad
   * sectors), or why they cannot be used (bb_err, bb_why).
   */
  bool has_bblog;
  int bb_err;
  char bb_why[200];
  struct md_bb_entry *bb_list;        /* owned: free with the exam */
  unsigned bb_words;
  uint64_t bb_ranges, bb_sectors;
  /* The superblock passes md_sb_decode() (and its bitmap, if any, is
   * usable): the plugin's assembly would consider it.
   */
  bool valid;
  bool judged;                /* its verdict is in (examine.c) */
  /* Can the raid5 plugin serve this member, and if not why. */
  bool servable;
  char verdict[240];
};

/* Room for examine_array_state(): one character per slot (capped). */
#define EXAMINE_STATE_MAX (MD_SB_MAX_DEV + 1)

/* md's words, as mdadm --examine prints them. */
const char *examine_level_name (int32_t level);
const char *examine_layout_name (int32_t level, uint32_t layout);
const char *examine_role_word (const struct md_sb *sb);   /* "active", ... */
void examine_array_state (const struct md_sb *sb, char *out, size_t len);

/* mdadm's "Unused Space": sectors before the data (after the superblock,
 * bitmap and bad-block log) and after it; false if mdadm would not print
 * it.  after may be negative on a truncated device.
 */
bool examine_unused_space (const struct exam *e, uint64_t *before,
                           int64_t *after);

/* Read and judge e's bad-block log from d (after e->sb is read). */
void examine_read_bblog (struct exam *e, const struct io_member *d);

/* e's bad-block list in mdadm --examine-badblocks's words, on stdout. */
void examine_print_badblocks (const struct exam *e);

/* One disk in mdadm --examine's words, then ours, on stdout. */
void examine_print_text (const struct exam *e);

/* Print the disks as a JSON array on stdout. */
void examine_print_json (const struct exam *e, unsigned n);

#endif /* TOOLS_EXAMINE_H */

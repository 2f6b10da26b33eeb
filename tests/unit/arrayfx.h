/* tests/unit/arrayfx.h -- a fixture for unit tests of the array layer
 * (array/array.h) without nbdkit: members as files in memory (a folder
 * of /dev/shm, or TMPDIR), made with raid5ctl create (md superblocks, as
 * a user makes them) or left raw; the array opened on them; a model of
 * every byte written, to read back against.  Every failure is a
 * Criterion assertion.
 */
#ifndef TESTS_UNIT_ARRAYFX_H
#define TESTS_UNIT_ARRAYFX_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "array/array.h"
#include "raid/badblocks.h"
#include "raid/mdsb.h"

struct afx {
  char dir[PATH_MAX];
  unsigned n;
  char path[R5_MAX_MEMBERS][PATH_MAX + 32];
  struct array_config cfg;
  struct array *a;
  uint64_t cap;               /* the array's bytes */
  unsigned char *model;       /* cap bytes: what the array must read */
};

/* n member files of bytes each in a new folder; raid5ctl create with
 * create_args ("--chunk 64K --bitmap internal"), or raw members
 * (metadata=none, 64K chunks) if create_args is NULL.
 */
void afx_make (struct afx *f, unsigned n, uint64_t bytes,
               const char *create_args);

/* Open the array on f's members (cfg as afx_make left it; change f->cfg
 * first to open it otherwise): the model is read from it.  Returns
 * array_open's result; err says why.
 */
int afx_open (struct afx *f, struct array_err *err);
void afx_open_ok (struct afx *f);
/* Open it again, its model kept (nothing read). */
void afx_reopen (struct afx *f);
/* Open it again after a grow ended: larger; the model is its start. */
void afx_reopen_grown (struct afx *f);
void afx_close (struct afx *f);

/* Write len bytes from seed's pseudo-random stream at off, and keep them
 * in the model.
 */
void afx_write (struct afx *f, uint64_t off, uint64_t len, unsigned seed);

/* Read the whole array and compare it with the model. */
void afx_verify (struct afx *f);

/* The same, but for [lost, lost + len), whose read must fail (EIO: the
 * array cannot compute those bytes).
 */
void afx_verify_lost (struct afx *f, uint64_t lost, uint64_t len);

/* Run a check (offline, in this thread): it ends well, mismatch_cnt 0. */
void afx_check_clean (struct afx *f);

/* The array's status (JSON), parsed (the caller puts it), or NULL if it
 * could not be made or is not JSON.  Asserts nothing: any thread may
 * call it.
 */
json_object *afx_status_json (struct afx *f);

/* A number in the array's status (JSON): section ("counters", "ppl",
 * "integrity", "job") and key.
 */
uint64_t afx_status (struct afx *f, const char *section, const char *key);

/* A number in slot's entry of the status' "members": object.key (object
 * NULL: key).
 */
uint64_t afx_member_status (struct afx *f, unsigned slot, const char *object,
                            const char *key);

/* Byte at member offset off of member file i, xor mask, written back. */
void afx_flip (struct afx *f, unsigned i, uint64_t off, unsigned char mask);

/* The log lines the array gave since the last afx_log_clear, one after
 * the other ("\n" between).
 */
const char *afx_log (void);
void afx_log_clear (void);

/* Member file path's md superblock, decoded; and written back encoded
 * (its checksum made again), for tests that make a state by hand.
 */
void afx_sb_read (const char *path, struct md_sb *sb);
void afx_sb_write (const char *path, const struct md_sb *sb);
/* Every member's superblock says a resync is due from sectors (md's
 * resync_offset): as an unclean stop leaves it.  The array is closed.
 */
void afx_mark_dirty (struct afx *f, uint64_t sectors);

/* Copy the file from (a member, say) to to, made or overwritten. */
void afx_copy_file (const char *from, const char *to);

/* A new empty member file of bytes in f's folder, its path in path
 * (size bytes), for a grow (m3.img: one past afx_make's three).
 */
void afx_new_member (struct afx *f, char *path, size_t size, uint64_t bytes);

/* Member path's md bad-block log holds tb (or, if empty_bit, nothing
 * but the superblock's bit: feature 0x8 over an empty list).
 */
void afx_put_log (const char *path, const struct md_bb_table *tb,
                  bool empty_bit);
/* Does member path's superblock have feature 0x8 (bad blocks listed)? */
bool afx_has_bb_bit (const char *path);

/* Remove the folder and every file in it. */
void afx_cleanup (struct afx *f);

#endif /* TESTS_UNIT_ARRAYFX_H */

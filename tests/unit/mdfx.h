/* tests/unit/mdfx.h -- the md fixtures made by real mdadm and kernel md
 * (tests/unit/fixtures/make-fixtures.sh, README.md there) and the text
 * mdadm --examine / --examine-bitmap printed about them.
 *
 * They are found in FIXTURES_DIR (set by the build), or in
 * $R5_FIXTURES_DIR when that is set (say, a copy changed on purpose).
 *
 * Every function asserts (Criterion) on a missing or short file: a fixture
 * that cannot be read is a failed test, never a skipped one.
 */
#ifndef TESTS_UNIT_MDFX_H
#define TESTS_UNIT_MDFX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MDFX_BLOCK 4096

struct mdfx {
  const char *name;           /* folder under fixtures/md */
  unsigned members;           /* members saved: m0 .. m(members-1) */
  bool bitmap;                /* mI.bm and mI.examine-bitmap exist */
};

extern const struct mdfx mdfx_all[];
extern const size_t mdfx_count;

/* Looks a fixture up by name; asserts that it exists. */
const struct mdfx *mdfx_get (const char *name);

/* Reads exactly len bytes of fixtures/md/NAME/FILE into buf. */
void mdfx_read (const char *name, const char *file, void *buf, size_t len);

/* mI.sb or mI.bm (what is "sb" or "bm") of member i. */
void mdfx_block (const struct mdfx *fx, unsigned i, const char *what,
                 uint8_t block[MDFX_BLOCK]);

/* The whole of a text file, NUL-terminated; the caller frees it. */
char *mdfx_text (const char *name, const char *file);

/* mI.examine or mI.examine-bitmap ("examine", "examine-bitmap"). */
char *mdfx_examine (const struct mdfx *fx, unsigned i, const char *what);

/* Member size in sectors (fixtures/md/NAME/sectors). */
uint64_t mdfx_sectors (const struct mdfx *fx);

/* The value of mdadm's "  Key : value" line, without its leading blanks,
 * up to the end of the line; false if there is no such line.
 */
bool mdfx_field (const char *text, const char *key, char *val, size_t len);

/* The first number in that value (decimal; hex after "0x"); asserts the
 * line exists.
 */
uint64_t mdfx_num (const char *text, const char *key);

#endif /* TESTS_UNIT_MDFX_H */

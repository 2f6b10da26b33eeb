/* tests/integration/model.h -- the expected content of an array.
 *
 * A model is what a client believes the array holds: one byte per array
 * byte (data) and one bit per array byte (known).  A byte is "known" when
 * the client wrote, zeroed or read it; a trim makes its range unknown,
 * because the plugin may leave a trimmed range as it was or zero it.
 *
 * On disk a model is two files: MODEL (size bytes, the data) and
 * MODEL.known (ceil(size / 8) bytes, bit i of byte i/8 = array byte i is
 * known, least significant bit first).  random-io writes them and
 * member-check reads them.
 *
 * Not thread-safe by itself: random-io serialises every update under its
 * own lock.  Errors are printed to stderr with the program name; functions
 * return 0 / -1.
 */
#ifndef INTEGRATION_MODEL_H
#define INTEGRATION_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct model {
  uint64_t size;              /* array size in bytes */
  unsigned char *data;        /* size bytes */
  unsigned char *known;       /* (size + 7) / 8 bytes */
};

/* Allocate a model of size bytes, all known and zero (fresh sparse members)
 * or all unknown.
 */
int model_init (struct model *m, uint64_t size, bool known);
void model_free (struct model *m);

/* Load MODEL and MODEL.known; the data file's length gives the size.  A
 * missing .known file means everything is known.
 */
int model_load (struct model *m, const char *path);

/* Write MODEL and MODEL.known. */
int model_save (const struct model *m, const char *path);

/* Range updates.  [off, off + len) must lie inside the model. */
void model_write (struct model *m, uint64_t off, const void *buf, size_t len);
void model_zero (struct model *m, uint64_t off, size_t len);
void model_forget (struct model *m, uint64_t off, size_t len);

static inline bool
model_is_known (const struct model *m, uint64_t off)
{
  return (m->known[off >> 3] >> (off & 7)) & 1;
}

/* Number of known bytes in [off, off + len). */
uint64_t model_count_known (const struct model *m, uint64_t off, uint64_t len);

/* The result of comparing len bytes read at array offset off with the
 * model.  Unknown bytes never differ.
 */
struct model_diff {
  uint64_t differ;            /* number of known bytes that differ */
  uint64_t first, last;       /* array offsets of the first and last */
};

/* Compare buf (read from array offset off) with the model.  If learn is
 * true, unknown bytes take the value read and become known (a trimmed range
 * must at least read back the same every time).  Returns d.differ.
 */
uint64_t model_compare (struct model *m, uint64_t off, const unsigned char *buf,
                        size_t len, bool learn, struct model_diff *d);

/* Print up to 32 bytes of buf (which starts at array offset base) around
 * array offset at, as hex and printable text, on one line prefixed by
 * label.  Used to show expected and actual bytes in failure reports.
 */
void print_bytes (const char *label, const unsigned char *buf, uint64_t base,
                  size_t len, uint64_t at);

/* Parse a size: decimal or 0x hex, optional K/M/G suffix (powers of 1024).
 * Returns 0, or -1 if s is not a size.
 */
int parse_size (const char *s, uint64_t *ret);

#endif /* INTEGRATION_MODEL_H */

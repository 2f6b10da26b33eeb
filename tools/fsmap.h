/* tools/fsmap.h -- what a file system keeps at given bytes of an array
 * (raid5ctl check --files): which files, at which bytes of each; or the
 * file system's own metadata (which structure, of which group); or free
 * space.  The file system is read through the array itself (array_read:
 * reads of a wrong stripe return what its data chunks hold; fsmap_src), by
 * e2fsprogs' libext2fs with an I/O manager of ours -- the library behind
 * debugfs' icheck and ncheck.  ext2, ext3 and ext4 are understood; on
 * anything else fsmap_explain says what it found instead.
 *
 * Single-threaded (libext2fs' I/O managers take a name, not a pointer:
 * the array is passed in a static).  Errors: -errno with one line in why.
 */
#ifndef TOOLS_FSMAP_H
#define TOOLS_FSMAP_H

#include <stddef.h>
#include <stdint.h>

/* Where the array's bytes come from: read (0 or -errno) fills buf with
 * array bytes [off, off+len), both within size; offline an open array
 * (array_read), online a server's control socket.  Called from one
 * thread.
 */
struct fsmap_src {
  int (*read) (void *opaque, void *buf, uint64_t len, uint64_t off);
  void *opaque;
  uint64_t size;              /* array bytes */
};

/* Array bytes to explain; tag is the caller's (say, a stripe's index). */
struct fsmap_range {
  uint64_t off, len;
  unsigned tag;
};

enum fsmap_kind {
  FSMAP_FILE,                 /* bytes of a file's (or directory's) data */
  FSMAP_FILE_MAP,             /* a block of a file's extent tree or
                               * indirect blocks */
  FSMAP_META,                 /* the file system's own (what says which) */
  FSMAP_FREE,                 /* no file holds it */
  FSMAP_OUTSIDE,              /* past the file system's end */
  FSMAP_UNKNOWN,              /* in a file system that could not be read */
};

/* One explanation: array bytes [array_off, +len) of range tag. */
struct fsmap_hit {
  unsigned tag;
  enum fsmap_kind kind;
  uint64_t array_off, len;
  uint32_t ino;               /* FILE, FILE_MAP */
  uint64_t file_off;          /* FILE: the first byte's offset in it */
  const char *path;           /* FILE, FILE_MAP: "/a/b", or "(inode 12,
                               * no name found)" */
  const char *what;           /* META: "inode table of group 3" */
};

typedef void (*fsmap_fn) (void *opaque, const struct fsmap_hit *hit);

/* What to explain: the n ranges r of the array read through src, in
 * the file system starting at array byte fs_off; each hit to fn.
 */
struct fsmap_query {
  const struct fsmap_src *src;
  uint64_t fs_off;
  const struct fsmap_range *r;
  size_t n;
  fsmap_fn fn;
  void *opaque;
};

/* The file system of q: its type ("ext4") in fstype (at least 16 bytes),
 * and a hit for every piece of the ranges, in order of range and offset
 * (consecutive blocks of one file, or of one kind of metadata, in one
 * hit).  Returns 0; -ENOENT with why when no ext2/3/4 file system is
 * there (fstype says what blkid would call it, if anything, else
 * "unknown"); -errno with why on a read error.
 */
int fsmap_explain (const struct fsmap_query *q, char *fstype, char *why,
                   size_t why_len)
  __attribute__((nonnull, warn_unused_result));

/* A partition of the array (fsmap-part.c). */
struct fsmap_part {
  unsigned number;            /* as the table numbers it: 1, 2, ... */
  uint64_t off, len;          /* array bytes */
};

/* The partitions the array's partition table lists (libblkid: DOS, GPT
 * and the others it knows; extended DOS containers left out), at most
 * max, in table order; pttype gets the table's type ("dos", "gpt"), ""
 * without one.  Returns how many (0: no partition table), or -errno.
 */
int fsmap_partitions (const struct fsmap_src *src, struct fsmap_part *out,
                      unsigned max,
                      char *pttype, size_t pttype_len)
  __attribute__((nonnull, warn_unused_result));

#endif /* TOOLS_FSMAP_H */

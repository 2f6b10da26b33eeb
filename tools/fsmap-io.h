/* tools/fsmap-io.h -- libext2fs reading an array (tools/fsmap-io.c):
 * the I/O manager to give ext2fs_open2, which then reads the file system
 * at array byte fs_off of src's array.  One array at a time (a static holds it).
 */
#ifndef TOOLS_FSMAP_IO_H
#define TOOLS_FSMAP_IO_H

#include <stdint.h>

#include <ext2fs/ext2fs.h>

struct fsmap_src;

io_manager fsmap_io_use (const struct fsmap_src *src, uint64_t fs_off)
  __attribute__((nonnull));

#endif /* TOOLS_FSMAP_IO_H */

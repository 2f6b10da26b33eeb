/* tools/fsmap-io.c -- a libext2fs I/O manager that reads an array through
 * an fsmap_src (fsmap.h): blocks of the file system at fs_off of the array.
 * Read-only: every write fails with EROFS.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ext2fs/ext2fs.h>

#include "tools/fsmap-io.h"
#include "tools/fsmap.h"

static const struct fsmap_src *io_src;  /* fsmap_io_use's: one at a time */
static uint64_t io_base;

static errcode_t r5_open (const char *name, int flags, io_channel *out);

static errcode_t
r5_close (io_channel c)
{
  if (--c->refcount > 0)
    return 0;
  free (c->name);
  free (c);
  return 0;
}

static errcode_t
r5_set_blksize (io_channel c, int blksize)
{
  c->block_size = blksize;
  return 0;
}

static errcode_t
r5_read_blk64 (io_channel c, unsigned long long block, int count, void *data)
{
  uint64_t len = count < 0 ? (uint64_t) -count
                           : (uint64_t) count * (uint64_t) c->block_size;
  uint64_t off = io_base + block * (uint64_t) c->block_size;

  if (off >= io_src->size || len > io_src->size - off)
    return EXT2_ET_SHORT_READ;
  return io_src->read (io_src->opaque, data, len, off) < 0 ? EIO : 0;
}

static errcode_t
r5_read_blk (io_channel c, unsigned long block, int count, void *data)
{
  return r5_read_blk64 (c, block, count, data);
}

static errcode_t
r5_write_blk64 (io_channel c, unsigned long long block, int count,
                const void *data)
{
  (void) c; (void) block; (void) count; (void) data;
  return EROFS;
}

static errcode_t
r5_write_blk (io_channel c, unsigned long block, int count, const void *data)
{
  return r5_write_blk64 (c, block, count, data);
}

static errcode_t
r5_flush (io_channel c)
{
  (void) c;
  return 0;
}

static struct struct_io_manager r5_manager = {
  .magic = EXT2_ET_MAGIC_IO_MANAGER,
  .name = "raid5 array",
  .open = r5_open,
  .close = r5_close,
  .set_blksize = r5_set_blksize,
  .read_blk = r5_read_blk,
  .write_blk = r5_write_blk,
  .flush = r5_flush,
  .read_blk64 = r5_read_blk64,
  .write_blk64 = r5_write_blk64,
};

static errcode_t
r5_open (const char *name, int flags, io_channel *out)
{
  io_channel c = calloc (1, sizeof *c);

  if (c == NULL || (c->name = strdup (name)) == NULL) {
    free (c);
    return ENOMEM;
  }
  c->magic = EXT2_ET_MAGIC_IO_CHANNEL;
  c->manager = &r5_manager;
  c->block_size = 1024;
  c->refcount = 1;
  c->flags = flags;
  *out = c;
  return 0;
}

io_manager
fsmap_io_use (const struct fsmap_src *src, uint64_t fs_off)
{
  io_src = src;
  io_base = fs_off;
  return &r5_manager;
}

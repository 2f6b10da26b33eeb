/* raid/parity.c -- XOR parity: ISA-L where its contract allows, a portable
 * reference everywhere else (and as the oracle of the unit tests).
 */
#include <config.h>

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <isa-l/raid.h>

#include "raid/parity.h"

/* ISA-L's xor_gen/xor_check want 32-byte aligned pointers; we also hand it
 * whole 64-byte blocks only, so no implementation has to deal with a tail.
 */
#define ISAL_ALIGN 32u
#define ISAL_BLOCK 64u
/* ISA-L takes an int length; stay well inside it. */
#define ISAL_MAX_LEN (1u << 30)

static uint64_t
load64 (const unsigned char *p)
{
  uint64_t v;

  memcpy (&v, p, sizeof v);
  return v;
}

/* XOR of byte i over the first n buffers. */
static unsigned char
xor_byte (unsigned n, void **array, size_t i)
{
  unsigned char x = 0;

  for (unsigned v = 0; v < n; v++)
    x ^= ((const unsigned char *) array[v])[i];
  return x;
}

void
r5_xor_gen_ref (unsigned vects, size_t len, void **array)
{
  unsigned nsrc = vects - 1;
  unsigned char *dst = array[nsrc];
  size_t i = 0;

  assert (vects >= 2);
  /* Word at a time; every source word is loaded before the destination
   * word is stored, so dst may alias a source.
   */
  for (; i + 8 <= len; i += 8) {
    uint64_t x = 0;

    for (unsigned v = 0; v < nsrc; v++)
      x ^= load64 ((const unsigned char *) array[v] + i);
    memcpy (dst + i, &x, sizeof x);
  }
  for (; i < len; i++)
    dst[i] = xor_byte (nsrc, array, i);
}

size_t
r5_xor_check_ref (unsigned vects, size_t len, void **array)
{
  assert (vects >= 2);
  for (size_t i = 0; i < len; i++)
    if (xor_byte (vects, array, i) != 0)
      return i;
  return len;
}

static bool
isal_aligned (unsigned vects, void **array)
{
  for (unsigned v = 0; v < vects; v++)
    if ((uintptr_t) array[v] % ISAL_ALIGN != 0)
      return false;
  return true;
}

/* The same buffers advanced by off bytes. */
static void
advance (unsigned vects, void **array, size_t off, void **out)
{
  for (unsigned v = 0; v < vects; v++)
    out[v] = (unsigned char *) array[v] + off;
}

/* Bytes at the start that ISA-L can take (0 if it cannot take any). */
static size_t
isal_prefix (unsigned vects, size_t len, void **array)
{
  size_t n = len - len % ISAL_BLOCK;

  if (vects < 3 || n == 0 || !isal_aligned (vects, array))
    return 0;
  return n < ISAL_MAX_LEN ? n : ISAL_MAX_LEN;
}

void
r5_xor_gen (unsigned vects, size_t len, void **array)
{
  void *moved[R5_XOR_VECTS_MAX];
  size_t done = 0;

  assert (vects >= 2 && vects <= R5_XOR_VECTS_MAX);
  if (vects == 2) {
    memmove (array[1], array[0], len);
    return;
  }
  while (done < len) {
    size_t n;

    advance (vects, array, done, moved);
    n = isal_prefix (vects, len - done, moved);
    if (n == 0) {
      r5_xor_gen_ref (vects, len - done, moved);
      return;
    }
    xor_gen ((int) vects, (int) n, moved);
    done += n;
  }
}

/* Whole blocks are checked by ISA-L; the first failing block (and any
 * tail) is searched byte by byte.
 */
size_t
r5_xor_check (unsigned vects, size_t len, void **array)
{
  void *moved[R5_XOR_VECTS_MAX];
  const size_t step = 4096;
  size_t done = 0;

  assert (vects >= 2 && vects <= R5_XOR_VECTS_MAX);
  while (done < len) {
    size_t n = len - done < step ? len - done : step;

    advance (vects, array, done, moved);
    if (isal_prefix (vects, n, moved) != n ||
        xor_check ((int) vects, (int) n, moved) != 0) {
      size_t bad = r5_xor_check_ref (vects, n, moved);

      if (bad < n)
        return done + bad;
    }
    done += n;
  }
  return len;
}

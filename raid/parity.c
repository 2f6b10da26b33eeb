/* raid/parity.c -- XOR parity: ISA-L where its contract allows, a portable
 * reference everywhere else (and as the oracle of the unit tests).
 */
#include <config.h>

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* 32 bytes (GCC's vector extension): one AVX2 register, two SSE2 ones;
 * loaded and stored through memcpy, so at any alignment.
 */
typedef uint64_t vec32 __attribute__ ((vector_size (32)));

/* The unaligned XOR below is built for baseline x86-64 (SSE2: two
 * registers a vector), for AVX2 (one) and for AVX-512, and the one the
 * processor can run is chosen when the library loads (an ifunc, so
 * glibc only; elsewhere the baseline build).
 */
#if defined (__x86_64__) && defined (__GLIBC__) && defined (__has_attribute)
# if __has_attribute (target_clones)
#  define WIDEST_X86 __attribute__ ((target_clones ("avx512f", "avx2", \
                                                    "default")))
# endif
#endif
#ifndef WIDEST_X86
# define WIDEST_X86
#endif

/* r5_xor_gen for buffers ISA-L cannot take (nbdkit's request buffers are
 * 16 bytes into their pages): 128 bytes at a time with unaligned vector
 * loads -- 3.6 times the word loop on buffers in the cache, 1.3 times
 * from memory (AMD EPYC) -- then the reference for the tail.  Every
 * source block is loaded before its destination block is stored.
 */
static WIDEST_X86 void
xor_gen_unaligned (unsigned vects, size_t len, void **array)
{
  const unsigned nsrc = vects - 1;
  unsigned char *dst = array[nsrc];
  void *tail[R5_XOR_VECTS_MAX];
  size_t i = 0;

  for (; i + 128 <= len; i += 128) {
    const unsigned char *s = (const unsigned char *) array[0] + i;
    vec32 x[4], t;

    for (unsigned k = 0; k < 4; k++)
      memcpy (&x[k], s + 32 * k, sizeof x[k]);
    for (unsigned v = 1; v < nsrc; v++) {
      s = (const unsigned char *) array[v] + i;
      for (unsigned k = 0; k < 4; k++) {
        memcpy (&t, s + 32 * k, sizeof t);
        x[k] ^= t;
      }
    }
    memcpy (dst + i, x, sizeof x);
  }
  if (i < len) {
    advance (vects, array, i, tail);
    r5_xor_gen_ref (vects, len - i, tail);
  }
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
      xor_gen_unaligned (vects, len - done, moved);
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
r5_xor_check_isal (unsigned vects, size_t len, void **array)
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

/* The first byte where a and b differ (they do, within n). */
static size_t
first_diff (const unsigned char *a, const unsigned char *b, size_t n)
{
  size_t i = 0;

  while (i < n && a[i] == b[i])
    i++;
  return i;
}

/* A slice at a time: the sources' XOR into sum (in the L1 cache), then
 * compared with the parity.  With one source, that source is the sum.
 */
size_t
r5_xor_check_gen (unsigned vects, size_t len, void **array)
{
  _Alignas (64) unsigned char sum[R5_XOR_CHECK_SLICE];
  void *moved[R5_XOR_VECTS_MAX];

  assert (vects >= 2 && vects <= R5_XOR_VECTS_MAX);
  for (size_t done = 0; done < len; done += R5_XOR_CHECK_SLICE) {
    size_t n = len - done < R5_XOR_CHECK_SLICE ? len - done
                                                : R5_XOR_CHECK_SLICE;
    const unsigned char *parity = (unsigned char *) array[vects - 1] + done;
    const unsigned char *got = sum;

    advance (vects - 1, array, done, moved);
    if (vects == 2)
      got = moved[0];
    else {
      moved[vects - 1] = sum;
      r5_xor_gen (vects, n, moved);
    }
    if (memcmp (got, parity, n) != 0)
      return done + first_diff (got, parity, n);
  }
  return len;
}

/* Calibration: CAL_VECTS buffers of CAL_LEN bytes, checked CAL_CALLS
 * times in a row each way, CAL_ROUNDS rounds alternately; the best round
 * of each way counts.  Small, because fresh pages are what costs here
 * (the first touch of a page took 17 us on one virtual machine).
 */
#define CAL_VECTS 4u
#define CAL_LEN (16u << 10)
#define CAL_CALLS 4
#define CAL_ROUNDS 7

enum check_way { WAY_UNKNOWN, WAY_ISAL, WAY_GEN };
static _Atomic int check_way = WAY_UNKNOWN;

static uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

typedef size_t check_fn (unsigned, size_t, void **);

/* Nanoseconds fn takes over the consistent buffers v, CAL_CALLS times;
 * UINT64_MAX if it finds them wrong (a way that errs is never the faster).
 */
static uint64_t
time_check (check_fn *fn, void **v)
{
  uint64_t t = now_ns ();

  for (int i = 0; i < CAL_CALLS; i++)
    if (fn (CAL_VECTS, CAL_LEN, v) != CAL_LEN)
      return UINT64_MAX;
  return now_ns () - t;
}

/* Which way is faster here, on consistent buffers in the cache, where a
 * processor's widest XOR shows (on the EPYC the faster in the cache was
 * the faster from memory too).  ISA-L's own if the buffers cannot be
 * had.
 */
static enum check_way
measure_way (void)
{
  unsigned char *buf = aligned_alloc (64, CAL_VECTS * CAL_LEN);
  uint64_t best_isal = UINT64_MAX, best_gen = UINT64_MAX;
  void *v[CAL_VECTS];

  if (buf == NULL)
    return WAY_ISAL;
  for (unsigned i = 0; i < CAL_VECTS; i++)
    v[i] = buf + (size_t) i * CAL_LEN;
  for (size_t i = 0; i < (CAL_VECTS - 1) * CAL_LEN; i++)
    buf[i] = (unsigned char) (i * 7 + i / 251);
  r5_xor_gen (CAL_VECTS, CAL_LEN, v);
  for (int r = 0; r < CAL_ROUNDS; r++) {
    uint64_t ti = time_check (r5_xor_check_isal, v);
    uint64_t tg = time_check (r5_xor_check_gen, v);

    best_isal = ti < best_isal ? ti : best_isal;
    best_gen = tg < best_gen ? tg : best_gen;
  }
  free (buf);
  return best_gen <= best_isal ? WAY_GEN : WAY_ISAL;
}

/* Measured by the first caller; callers meanwhile may measure too, and
 * store what they found: any answer is a right one.
 */
static enum check_way
way (void)
{
  int w = atomic_load_explicit (&check_way, memory_order_relaxed);

  if (w == WAY_UNKNOWN) {
    w = measure_way ();
    atomic_store_explicit (&check_way, w, memory_order_relaxed);
  }
  return (enum check_way) w;
}

const char *
r5_xor_check_way (void)
{
  return way () == WAY_GEN ? "xor_gen+compare" : "xor_check";
}

size_t
r5_xor_check (unsigned vects, size_t len, void **array)
{
  return way () == WAY_GEN ? r5_xor_check_gen (vects, len, array)
                           : r5_xor_check_isal (vects, len, array);
}

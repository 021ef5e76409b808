/*
 * exec_init.h: the initial value of a weight's element, as a pure function
 * of (seed, global tensor, element index), for every device: the host
 * (exec_params.c) and the CUDA device's fill kernel include this one
 * definition, so the GPU draws the same numbers the CPU does.
 *
 * The generator is counter-based: splitmix64 (Steele, Lea & Flood 2014,
 * "Fast splittable pseudorandom number generators"; the finaliser of
 * Java's SplittableRandom) of the counter, two 53-bit uniforms in (0, 1),
 * and the Box-Muller transform (Box & Muller 1958) for one standard
 * normal, all in double. No state is carried, so any piece of any tensor
 * is drawn on its own.
 */
#ifndef SMD_EXEC_INIT_H
#define SMD_EXEC_INIT_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define EXEC_HD __host__ __device__
#else
#define EXEC_HD
#endif

enum { EXEC_INIT_NORMAL = 0, EXEC_INIT_ZERO, EXEC_INIT_ONE };

#define EXEC_TWO_PI 6.283185307179586

static inline EXEC_HD uint64_t exec_splitmix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1), from 53 random bits. */
static inline EXEC_HD double exec_unit_open(uint64_t bits)
{
    return ((double)(bits >> 11) + 0.5) / 9007199254740992.0;
}

/* Element i of global tensor gid: 0, 1, or std times a standard normal. */
static inline EXEC_HD double exec_init_draw(int kind, double std, int gid, int64_t i,
                                            uint64_t seed)
{
    if (kind == EXEC_INIT_ZERO)
        return 0.0;
    if (kind == EXEC_INIT_ONE)
        return 1.0;
    uint64_t k = exec_splitmix64(seed ^ exec_splitmix64(((uint64_t)gid << 40) ^ (uint64_t)i));
    double u1 = exec_unit_open(k), u2 = exec_unit_open(exec_splitmix64(k));
    return std * sqrt(-2.0 * log(u1)) * cos(EXEC_TWO_PI * u2);
}

/* What a device's init_fill writes: elements k0 .. k0 + n of a piece of a
 * global tensor (gid, its kind and std; gcols its columns), the piece's
 * elements enumerated row by row: element k is the tensor's
 * (row0 + k / ncols, col0 + k % ncols). */
typedef struct exec_init_fill {
    int gid, kind;
    double std;
    uint64_t seed;
    int64_t row0, col0, ncols, gcols;
} exec_init_fill;

static inline EXEC_HD int64_t exec_init_index(const exec_init_fill *f, int64_t k)
{
    return (f->row0 + k / f->ncols) * f->gcols + f->col0 + k % f->ncols;
}

#endif

/*
 * exec_alloc_cuda.c: the CUDA device's allocator of device memory
 * (exec_dev_cuda_int.h). Blocks are reserved with cudaMalloc per buffer
 * class, at least CU_BLOCK_MIN each, and carved first-fit into pieces of
 * CU_ALIGN-byte multiples; a freed piece merges with its free neighbours
 * and stays in its block, so the executor's buffers, allocated again each
 * step, come from memory reserved in the first one.
 *
 * Invariants: a block's pieces are sorted by offset and cover it exactly;
 * no two neighbouring pieces are both free after a free. Sizes in bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/exec_dev_cuda_int.h"

/* Allocation granularity (cudaMalloc's own alignment) and the smallest
 * block reserved from CUDA. */
#define CU_ALIGN 256u
#define CU_BLOCK_MIN ((size_t)64 << 20)

/* One carved range of a block. */
typedef struct cu_piece {
    size_t off, size;
    int used;
} cu_piece;

/* One cudaMalloc'd block of a buffer class. */
struct exec_cuda_block {
    char *base;
    size_t size;
    exec_mem_class cls;
    int n, cap;
    cu_piece *piece;             /* sorted by offset, covering the block */
};

static int piece_insert(exec_cuda_block *b, int at, cu_piece p)
{
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 16;
        cu_piece *np = realloc(b->piece, (size_t)cap * sizeof *np);
        if (!np)
            return -1;
        b->piece = np;
        b->cap = cap;
    }
    memmove(b->piece + at + 1, b->piece + at, (size_t)(b->n - at) * sizeof *b->piece);
    b->piece[at] = p;
    b->n++;
    return 0;
}

/* First fit in block b: the piece's address, or NULL. */
static void *carve_from(exec_cuda_block *b, size_t bytes)
{
    for (int i = 0; i < b->n; i++) {
        cu_piece *p = &b->piece[i];
        if (p->used || p->size < bytes)
            continue;
        if (p->size > bytes) {
            cu_piece rest = {p->off + bytes, p->size - bytes, 0};
            if (piece_insert(b, i + 1, rest) != 0)
                return NULL;
            p = &b->piece[i];
            p->size = bytes;
        }
        p->used = 1;
        return b->base + p->off;
    }
    return NULL;
}

void *exec__cuda_pool_alloc(exec_cuda_pool *pool, size_t bytes, exec_mem_class cls, size_t *size)
{
    bytes = (bytes + CU_ALIGN - 1) / CU_ALIGN * CU_ALIGN;
    if (!bytes)
        bytes = CU_ALIGN;
    *size = bytes;
    void *p = NULL;
    for (int i = 0; i < pool->n && !p; i++)
        if (pool->blocks[i].cls == cls)
            p = carve_from(&pool->blocks[i], bytes);
    if (p)
        return p;
    if (pool->n == pool->cap) {
        int cap = pool->cap ? 2 * pool->cap : 16;
        exec_cuda_block *nb = realloc(pool->blocks, (size_t)cap * sizeof *nb);
        if (!nb)
            return NULL;
        pool->blocks = nb;
        pool->cap = cap;
    }
    size_t block = bytes < CU_BLOCK_MIN ? CU_BLOCK_MIN : bytes;
    block = (block + EXEC_CUDA_ROUND_BYTES - 1) / EXEC_CUDA_ROUND_BYTES * EXEC_CUDA_ROUND_BYTES;
    char *base = NULL;
    cudaError_t e = cudaMalloc((void **)&base, block);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* out of memory is answered, not sticky */
        return NULL;
    }
    exec_cuda_block *b = &pool->blocks[pool->n];
    memset(b, 0, sizeof *b);
    b->base = base;
    b->size = block;
    b->cls = cls;
    if (piece_insert(b, 0, (cu_piece){0, block, 0}) != 0) {
        cudaFree(base);
        return NULL;
    }
    pool->n++;
    return carve_from(b, bytes);
}

int exec__cuda_pool_free(exec_cuda_pool *pool, void *ptr)
{
    char *p = ptr;
    for (int i = 0; i < pool->n; i++) {
        exec_cuda_block *b = &pool->blocks[i];
        if (p < b->base || p >= b->base + b->size)
            continue;
        size_t off = (size_t)(p - b->base);
        for (int k = 0; k < b->n; k++) {
            if (b->piece[k].off != off)
                continue;
            b->piece[k].used = 0;
            /* merge with free neighbours */
            if (k + 1 < b->n && !b->piece[k + 1].used) {
                b->piece[k].size += b->piece[k + 1].size;
                memmove(b->piece + k + 1, b->piece + k + 2,
                        (size_t)(b->n - k - 2) * sizeof *b->piece);
                b->n--;
            }
            if (k > 0 && !b->piece[k - 1].used) {
                b->piece[k - 1].size += b->piece[k].size;
                memmove(b->piece + k, b->piece + k + 1, (size_t)(b->n - k - 1) * sizeof *b->piece);
                b->n--;
            }
            return 0;
        }
    }
    return -1;
}

void exec__cuda_pool_fini(exec_cuda_pool *pool)
{
    for (int i = 0; i < pool->n; i++) {
        cudaFree(pool->blocks[i].base);
        free(pool->blocks[i].piece);
    }
    free(pool->blocks);
    memset(pool, 0, sizeof *pool);
}

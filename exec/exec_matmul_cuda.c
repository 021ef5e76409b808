/*
 * exec_matmul_cuda.c: the CUDA device's matrix products on cuBLASLt
 * (exec_dev_cuda_int.h): bf16 in and out, fp32 accumulation
 * (CUBLAS_COMPUTE_32F), a bias in the product's epilogue
 * (CUBLASLT_EPILOGUE_BIAS, or BGRADB for a bias gradient), and the GELU
 * forward and backward with their pre-activation as the epilogue's
 * auxiliary matrix (GELU_AUX_BIAS, DGELU), where cuBLASLt has an algorithm
 * for it. Matrices are column-major, as cuBLAS sees them;
 * the device's row-major products are written as their transposes.
 *
 * Each product's plan (its descriptor, its three layouts and the algorithm
 * cuBLASLt's heuristic chose first) is made once per key (shape, strides,
 * transposes, epilogue, operand alignments) and kept, CU_PLAN_CACHE of
 * them; a call then costs the host one attribute for a bias pointer and
 * the launch. Every cuBLASLt call is checked; a failure is raised into
 * the device's sticky error with cuBLASLt's status.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/exec_dev_cuda_int.h"

/* Plans kept; a full cache gives up its last plan for a new one. */
#define CU_PLAN_CACHE 256

typedef struct cu_plan_key {
    int ta, tb, batch, epilogue, dtype_d;
    int64_t m, n, k, lda, ldb, ldd, sa, sb, sd;
    uint32_t align_a, align_b, align_d, align_bias, align_aux;
    uint32_t align_c; /* 0: C is D */
} cu_plan_key;

/* A product's plan, made once per key and kept. */
struct exec_cuda_plan {
    cu_plan_key key;
    cublasLtMatmulAlgo_t algo;
    int ok;                      /* 0: cuBLASLt has none for this key */
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, ld;
};

static int ckb_at(exec_cuda_lt *lt, cublasStatus_t e, const char *what, const char *file,
                  int line)
{
    if (e == CUBLAS_STATUS_SUCCESS)
        return 0;
    st_raise(lt->fail, ST_EIO, file, line, "cublasLt: %s: status %d", what, (int)e);
    return 1;
}

#define CKB(lt, call) ckb_at((lt), (call), #call, __FILE__, __LINE__)

static int failed(const exec_cuda_lt *lt)
{
    return lt->fail->code != ST_OK;
}

static void plan_drop(exec_cuda_plan *a)
{
    if (a->ld)
        cublasLtMatrixLayoutDestroy(a->ld);
    if (a->lb)
        cublasLtMatrixLayoutDestroy(a->lb);
    if (a->la)
        cublasLtMatrixLayoutDestroy(a->la);
    if (a->op)
        cublasLtMatmulDescDestroy(a->op);
    a->op = NULL;
    a->la = a->lb = a->ld = NULL;
}

int exec__cuda_lt_open(exec_cuda_lt *lt, cudaStream_t stream, st_err *fail, st_err *err)
{
    lt->stream = stream;
    lt->fail = fail;
    lt->plans = calloc(CU_PLAN_CACHE, sizeof *lt->plans);
    if (!lt->plans)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the cuda device");
    cudaError_t e = cudaMalloc(&lt->ws, EXEC_CUDA_LT_WORKSPACE);
    if (e != cudaSuccess)
        return ST_RAISE(err, ST_EIO, "cuda: %s", cudaGetErrorString(e));
    cublasStatus_t bs = cublasLtCreate(&lt->handle);
    if (bs != CUBLAS_STATUS_SUCCESS)
        return ST_RAISE(err, ST_EIO, "cublasLtCreate: status %d", (int)bs);
    return ST_OK;
}

void exec__cuda_lt_close(exec_cuda_lt *lt)
{
    if (lt->ws)
        cudaFree(lt->ws);
    if (lt->handle)
        cublasLtDestroy(lt->handle);
    for (int i = 0; lt->plans && i < lt->nplans; i++)
        plan_drop(&lt->plans[i]);
    free(lt->plans);
    memset(lt, 0, sizeof *lt);
}

/* The cached plan of a key, NULL if none. */
static exec_cuda_plan *plan_find(exec_cuda_lt *lt, const cu_plan_key *key)
{
    for (int i = 0; i < lt->nplans; i++)
        if (!memcmp(&lt->plans[i].key, key, sizeof *key))
            return &lt->plans[i];
    return NULL;
}

/* A new plan of a key from its descriptor and layouts (the slot owns them
 * from here, also when cuBLASLt has no algorithm): cuBLASLt's first
 * heuristic choice. NULL only when the device failed. */
static exec_cuda_plan *plan_make(exec_cuda_lt *lt, const cu_plan_key *key,
                                 cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t la,
                                 cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t ld)
{
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t res;
    /* C is D unless the call gives its own (a residual) */
    uint32_t align_c = key->align_c && key->align_c < key->align_d ? key->align_c : key->align_d;
    int found = 0;
    uint64_t ws = EXEC_CUDA_LT_WORKSPACE;
    if (!CKB(lt, cublasLtMatmulPreferenceCreate(&pref)) &&
        !CKB(lt, cublasLtMatmulPreferenceSetAttribute(
                     pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws)) &&
        !CKB(lt, cublasLtMatmulPreferenceSetAttribute(
                     pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &key->align_a,
                     sizeof key->align_a)) &&
        !CKB(lt, cublasLtMatmulPreferenceSetAttribute(
                     pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &key->align_b,
                     sizeof key->align_b)) &&
        !CKB(lt, cublasLtMatmulPreferenceSetAttribute(
                     pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c,
                     sizeof align_c)) &&
        !CKB(lt, cublasLtMatmulPreferenceSetAttribute(
                     pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &key->align_d,
                     sizeof key->align_d))) {
        cublasStatus_t st =
            cublasLtMatmulAlgoGetHeuristic(lt->handle, op, la, lb, ld, ld, pref, 1, &res, &found);
        if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED)
            CKB(lt, st);
    }
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    /* a full cache gives up its last plan for the new one */
    exec_cuda_plan *slot =
        &lt->plans[lt->nplans < CU_PLAN_CACHE ? lt->nplans++ : CU_PLAN_CACHE - 1];
    plan_drop(slot);
    slot->key = *key;
    slot->ok = !failed(lt) && found > 0;
    if (slot->ok)
        slot->algo = res.algo;
    slot->op = op;
    slot->la = la;
    slot->lb = lb;
    slot->ld = ld;
    return failed(lt) ? NULL : slot;
}

static cublasLtMatrixLayout_t layout(exec_cuda_lt *lt, cudaDataType t, int64_t rows,
                                     int64_t cols, int64_t ld, int batch, int64_t stride)
{
    cublasLtMatrixLayout_t l = NULL;
    if (CKB(lt, cublasLtMatrixLayoutCreate(&l, t, (uint64_t)rows, (uint64_t)cols, ld)))
        return NULL;
    if (batch > 1) {
        int32_t bc = batch;
        CKB(lt, cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc,
                                                 sizeof bc));
        CKB(lt, cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                 &stride, sizeof stride));
    }
    return l;
}

/* The plan of a product not seen before: its descriptor (transposes, the
 * epilogue) and layouts, then cuBLASLt's algorithm. NULL when the device
 * failed. */
static exec_cuda_plan *plan_new(exec_cuda_lt *lt, const cu_plan_key *key, const void *bias,
                                const void *aux)
{
    int ta = key->ta, tb = key->tb, batch = key->batch;
    int64_t m = key->m, n = key->n, k = key->k;
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, ld = NULL;
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (!CKB(lt, cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) &&
        !CKB(lt, cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opa,
                                                sizeof opa)) &&
        !CKB(lt, cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opb,
                                                sizeof opb)) &&
        key->epilogue) {
        static const cublasLtEpilogue_t epis[] = {
            CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_BIAS, CUBLASLT_EPILOGUE_BGRADB,
            CUBLASLT_EPILOGUE_GELU_AUX_BIAS, CUBLASLT_EPILOGUE_DGELU};
        cublasLtEpilogue_t epi = epis[key->epilogue];
        cudaDataType bt = CUDA_R_16BF;
        int64_t ld_aux = key->ldd;
        if (!CKB(lt, cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
                                                    sizeof epi)) &&
            bias &&
            !CKB(lt, cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                    sizeof bias)))
            CKB(lt, cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt,
                                                   sizeof bt));
        /* the GELU's input, in D's layout and type */
        if (aux && !failed(lt) &&
            !CKB(lt, cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                                                    &aux, sizeof aux)))
            CKB(lt, cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD,
                                                   &ld_aux, sizeof ld_aux));
    }
    if (!failed(lt)) {
        la = layout(lt, CUDA_R_16BF, ta ? k : m, ta ? m : k, key->lda, batch, key->sa);
        lb = layout(lt, CUDA_R_16BF, tb ? n : k, tb ? k : n, key->ldb, batch, key->sb);
        ld = layout(lt, CUDA_R_16BF, m, n, key->ldd, batch, key->sd);
    }
    if (failed(lt)) {
        exec_cuda_plan tmp = {.op = op, .la = la, .lb = lb, .ld = ld};
        plan_drop(&tmp);
        return NULL;
    }
    return plan_make(lt, key, op, la, lb, ld);
}

/* One product with the epilogue epi (0 none, 1 bias, 2 bias gradient, 3
 * GELU with its input out to aux, 4 the GELU's gradient from aux): its plan
 * found or made, the call's own pointers set, run. 1: no algorithm for
 * the epilogue, nothing run. */
static int lt_run(exec_cuda_lt *lt, int epi, int ta, int tb, int64_t m, int64_t n, int64_t k,
                  const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb,
                  void *D, int64_t ldd, int64_t sd, int batch, float alpha, float beta,
                  const void *bias, void *aux, const void *C)
{
    if (failed(lt) || m == 0 || n == 0)
        return 0;
    cu_plan_key key;
    memset(&key, 0, sizeof key);
    key.ta = ta;
    key.tb = tb;
    key.batch = batch;
    key.epilogue = epi;
    key.dtype_d = CUDA_R_16BF;
    key.m = m;
    key.n = n;
    key.k = k;
    key.lda = lda;
    key.ldb = ldb;
    key.ldd = ldd;
    key.sa = batch > 1 ? sa : 0;
    key.sb = batch > 1 ? sb : 0;
    key.sd = batch > 1 ? sd : 0;
    key.align_a = exec__cuda_align(A);
    key.align_b = exec__cuda_align(B);
    key.align_d = exec__cuda_align(D);
    key.align_bias = bias ? exec__cuda_align(bias) : 0;
    key.align_c = C ? exec__cuda_align(C) : 0;
    key.align_aux = aux ? exec__cuda_align(aux) : 0;
    exec_cuda_plan *plan = plan_find(lt, &key);
    if (!plan && !(plan = plan_new(lt, &key, bias, aux)))
        return 0;
    if (!plan->ok) {
        if (epi)
            return 1; /* the caller runs the epilogue's work itself */
        st_raise(lt->fail, ST_EIO, __FILE__, __LINE__,
                 "cublasLt: no algorithm for a %lld x %lld x %lld product (batch %d)",
                 (long long)m, (long long)n, (long long)k, batch);
        return 0;
    }
    /* the pointers are the call's own (the key holds only their alignment) */
    if (bias && CKB(lt, cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                       &bias, sizeof bias)))
        return 0;
    if (aux && CKB(lt, cublasLtMatmulDescSetAttribute(
                           plan->op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux)))
        return 0;
    CKB(lt, cublasLtMatmul(lt->handle, plan->op, &alpha, A, plan->la, B, plan->lb, &beta,
                           C ? C : D, plan->ld, D, plan->ld, &plan->algo, lt->ws,
                           EXEC_CUDA_LT_WORKSPACE, lt->stream));
    return 0;
}

int exec__cuda_lt_matmul(exec_cuda_lt *lt, int ta, int tb, int64_t m, int64_t n, int64_t k,
                         const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb,
                         int64_t sb, void *D, int64_t ldd, int64_t sd, int batch, float alpha,
                         float beta, const void *bias, int bgrad, const void *C)
{
    return lt_run(lt, bias ? 1 + (bgrad != 0) : 0, ta, tb, m, n, k, A, lda, sa, B, ldb, sb, D,
                  ldd, sd, batch, alpha, beta, bias, NULL, C);
}

int exec__cuda_lt_matmul_gelu(exec_cuda_lt *lt, exec_cuda_gelu kind, int ta, int tb, int64_t m,
                              int64_t n, int64_t k, const void *A, int64_t lda, const void *B,
                              int64_t ldb, void *D, int64_t ldd, const void *bias, void *aux)
{
    return lt_run(lt, kind == EXEC_CUDA_GELU_FWD ? 3 : 4, ta, tb, m, n, k, A, lda, 0, B, ldb, 0,
                  D, ldd, 0, 1, 1.0f, 0.0f, kind == EXEC_CUDA_GELU_FWD ? bias : NULL, aux, NULL);
}

/* float32 C = A @ B with B packed once, at prepare, into panels of EL_F32_NR columns: the
 * float CONV_2D's product (conv_blas.c) where the CPU has AVX2 and FMA.
 *
 * Why not numpy's OpenBLAS there: its sgemm packs B again on every call and takes a lock
 * per call; conv_blas.c's blocks are small (128 output pixels), so on two threads two
 * concurrent calls of 128 x 96 x 16 took 16 us each against 9 alone, and MobileNetV2's
 * 1x1 convolutions gained 1.1-1.3x from a second thread (LiteRT's: 2x). This kernel packs
 * nothing at run time and shares nothing between threads.
 *
 * The blocking is XNNPACK's f32 GEMM's: a tile of EL_F32_MR rows x 16 columns is held in
 * 12 AVX2 registers over the whole depth k, each step one 16-float row of the packed panel,
 * six broadcasts of A and twelve fused multiply-adds; the tile is stored once. Rows past the
 * last (a tile of fewer than 6) read the last row again and are not stored. Each output
 * value is one chain over k in order -- c = fma(a_k, b_k, c) from 0 -- so it does not depend
 * on the blocks, the panels or the thread that computes it: the same bits at any thread
 * count. The baseline build (no AVX2 / FMA, or el_allow_avx2(0)) runs the same tile in
 * plain C (a product then a sum per step: within float rounding of the FMA tile, not equal).
 */
#include <stdint.h>
#include <string.h>

#include "native.h"
#include "native_float.h"

#if defined(EL_X86_AVX2)
#include <immintrin.h>
#endif

#define MR EL_F32_MR
#define NR EL_F32_NR

int64_t el_gemm_f32_packed_size(int64_t k, int64_t n) { return (n + NR - 1) / NR * NR * k; }

/* B = filter^T for the (n, k) row-major filter (a CONV_2D's OHWI weights as stored: one row
 * of k per output channel, so no transposed copy is made): panel j (columns j * NR ..)
 * holds k rows of NR floats, B[kk][j0 + j] = filter[j0 + j][kk], the columns past n zero */
void el_gemm_f32_pack(const float *filter, int64_t k, int64_t n, float *out)
{
    for (int64_t j0 = 0; j0 < n; j0 += NR) {
        float *panel = out + j0 * k;
        const int64_t width = n - j0 < NR ? n - j0 : NR;
        for (int64_t kk = 0; kk < k; kk++) {
            for (int64_t j = 0; j < width; j++) panel[kk * NR + j] = filter[(j0 + j) * k + kk];
            for (int64_t j = width; j < NR; j++) panel[kk * NR + j] = 0.0f;
        }
    }
}

/* rows[r]: A's row r of the tile (the last real row again past mr) */
static void tile_rows(const float *a, int64_t lda, int64_t mr, const float *rows[MR])
{
    for (int r = 0; r < MR; r++) rows[r] = a + (r < mr ? r : mr - 1) * lda;
}

/* the first mr rows and nc columns of the tile t into c */
static void store_tile(float t[MR][NR], int64_t mr, int64_t nc, float *c, int64_t ldc)
{
    for (int64_t r = 0; r < mr; r++) memcpy(c + r * ldc, t[r], (size_t)nc * sizeof(float));
}

static void tile_base(const float *a, int64_t lda, int64_t mr, const float *panel,
                      int64_t k, float *c, int64_t ldc, int64_t nc)
{
    const float *rows[MR];
    float t[MR][NR] = {{0}};
    tile_rows(a, lda, mr, rows);
    for (int64_t kk = 0; kk < k; kk++) {
        const float *b = panel + kk * NR;
        for (int r = 0; r < MR; r++) {
            const float av = rows[r][kk];
            for (int j = 0; j < NR; j++) t[r][j] += av * b[j];
        }
    }
    store_tile(t, mr, nc, c, ldc);
}

#if defined(EL_X86_AVX2)
#define FMA_ROW(r, a0, a1)                                                                   \
    do {                                                                                     \
        const __m256 v = _mm256_broadcast_ss(rows[r] + kk);                                  \
        a0 = _mm256_fmadd_ps(v, b0, a0);                                                     \
        a1 = _mm256_fmadd_ps(v, b1, a1);                                                     \
    } while (0)

__attribute__((target("avx2,fma"))) static void tile_fma(const float *a, int64_t lda,
                                                         int64_t mr, const float *panel,
                                                         int64_t k, float *c, int64_t ldc,
                                                         int64_t nc)
{
    const float *rows[MR];
    tile_rows(a, lda, mr, rows);
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int64_t kk = 0; kk < k; kk++) {
        const __m256 b0 = _mm256_loadu_ps(panel + kk * NR);
        const __m256 b1 = _mm256_loadu_ps(panel + kk * NR + 8);
        FMA_ROW(0, c00, c01);
        FMA_ROW(1, c10, c11);
        FMA_ROW(2, c20, c21);
        FMA_ROW(3, c30, c31);
        FMA_ROW(4, c40, c41);
        FMA_ROW(5, c50, c51);
    }
    const __m256 acc[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                               {c30, c31}, {c40, c41}, {c50, c51}};
    if (mr == MR && nc == NR) { /* the common tile: straight to C */
        for (int r = 0; r < MR; r++) {
            _mm256_storeu_ps(c + r * ldc, acc[r][0]);
            _mm256_storeu_ps(c + r * ldc + 8, acc[r][1]);
        }
        return;
    }
    float t[MR][NR];
    for (int r = 0; r < MR; r++) {
        _mm256_storeu_ps(t[r], acc[r][0]);
        _mm256_storeu_ps(t[r] + 8, acc[r][1]);
    }
    store_tile(t, mr, nc, c, ldc);
}

int el_gemm_f32_fma(void)
{
    static int known = -1; /* a benign race: every thread computes the same value */
    if (known < 0) known = __builtin_cpu_supports("fma") ? 1 : 0;
    return known && el_have_avx2();
}
#else
int el_gemm_f32_fma(void) { return 0; }
#define tile_fma tile_base
#endif

void el_gemm_f32_packed(int64_t m, int64_t k, const float *a, int64_t lda,
                        const float *packed, float *c, int64_t ldc, int64_t c0, int64_t c1)
{
    void (*tile)(const float *, int64_t, int64_t, const float *, int64_t, float *, int64_t,
                 int64_t) = el_gemm_f32_fma() ? tile_fma : tile_base;
    for (int64_t j0 = c0; j0 < c1; j0 += NR) {
        const float *panel = packed + j0 * k;
        const int64_t nc = c1 - j0 < NR ? c1 - j0 : NR;
        for (int64_t r = 0; r < m; r += MR)
            tile(a + r * lda, lda, m - r < MR ? m - r : MR, panel, k, c + r * ldc + j0, ldc,
                 nc);
    }
}

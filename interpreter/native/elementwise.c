/* int8 / uint8 binary ops (ADD, SUB, MUL) with broadcasting, two ways:
 *
 * EL_TABLE   The numpy kernel (interpreter/kernels/arithmetic.py) evaluates the kernel
 *            set's arithmetic -- TFLite's reference_integer_ops::AddElementwise /
 *            MulElementwise, LiteRT's NEON blocks (add_paths.py), XNNPACK's micro-kernels
 *            -- once for all 256 x 256 input pairs in prepare, and eval indexes that table
 *            by the input bytes (x1 << 8) | x2 (plus path << 16 where elements take
 *            different code paths). This is the same lookup in one pass, so its results
 *            are the table's, bit for bit, in every kernel set.
 * EL_XNN_ADD XNNPACK's qs8 / qu8 vadd (arithmetic.XnnAdd), computed directly: with
 *            a = x1 - z1, b = x2 - z2 and 21-bit multipliers,
 *                out = clamp(((a * ma + b * mb + 2^(shift-1)) >> shift) + z_out)
 *            |a * ma| < 2^29 and shift <= 30, so int32 holds every step (as in XNNPACK).
 * EL_XNN_MUL XNNPACK's fp32 vmul (arithmetic.XnnMul):
 *                out = clamp(rint(float(a * b) * scale) + z_out)
 *            clamped in float before the half-to-even rounding (the bounds are integers).
 * The direct forms vectorize where a lookup cannot; each is the numpy formula step for step.
 *
 * Operands are described by broadcast strides over the output's collapsed shape (adjacent
 * dimensions merged where both inputs allow, edgelite.interpreter.kernels.common.native_ops); a stride of
 * 0 repeats the value. A "row" is one run of the innermost dimension; a call computes the
 * output values [begin, end) of the flat output. */
#include <stddef.h>
#include <stdint.h>

#include "native.h"

static inline int32_t load(const uint8_t *p, int64_t i, const int is_uint8)
{
    return is_uint8 ? (int32_t)p[i] : (int32_t)(int8_t)p[i];
}

/* rint for |v| < 2^22 in the default rounding mode (half to even, as np.rint) */
static inline float rint_small(float v)
{
    const float magic = 12582912.0f; /* 1.5 * 2^23; IEEE arithmetic, not folded */
    return (v + magic) - magic;
}

/* One row of a direct formula; sa / sb are 0 or 1 in the specialized calls below, so
 * the compiler emits a vector loop for each stride pattern. */
static inline void row_direct(const struct el_binary *restrict p, const uint8_t *a,
                              int64_t sa, const uint8_t *b, int64_t sb,
                              uint8_t *restrict out, int64_t n, const int kind,
                              const int is_uint8)
{
    const int32_t za = p->za, zb = p->zb, zo = p->zo, lo = p->lo, hi = p->hi;
    if (kind == EL_XNN_ADD) {
        const int32_t ma = p->ma, mb = p->mb, shift = p->shift;
        const int32_t round = (int32_t)1 << (shift - 1);
        for (int64_t i = 0; i < n; i++) {
            const int32_t va = load(a, i * sa, is_uint8) - za;
            const int32_t vb = load(b, i * sb, is_uint8) - zb;
            int32_t v = ((va * ma + vb * mb + round) >> shift) + zo;
            v = v < lo ? lo : v;
            v = v > hi ? hi : v;
            out[i] = (uint8_t)v;
        }
    } else {
        const float scale = p->scale, flo = (float)(lo - zo), fhi = (float)(hi - zo);
        for (int64_t i = 0; i < n; i++) {
            const int32_t va = load(a, i * sa, is_uint8) - za;
            const int32_t vb = load(b, i * sb, is_uint8) - zb;
            /* the product of two 9-bit values is exact in float: float(va * vb) */
            float v = ((float)va * (float)vb) * scale;
            v = v < flo ? flo : v;
            v = v > fhi ? fhi : v;
            out[i] = (uint8_t)((int32_t)rint_small(v) + zo);
        }
    }
}

#define EL_ROW_STRIDES(KIND, U)                                                       \
    do {                                                                              \
        if (sa == 1 && sb == 1) row_direct(p, a, 1, b, 1, out, n, KIND, U);           \
        else if (sa == 1 && sb == 0) row_direct(p, a, 1, b, 0, out, n, KIND, U);      \
        else if (sa == 0 && sb == 1) row_direct(p, a, 0, b, 1, out, n, KIND, U);      \
        else row_direct(p, a, sa, b, sb, out, n, KIND, U);                            \
    } while (0)

/* every (kind, type, stride pattern) specialization of row_direct, compiled for a target */
#define EL_ROW_FORMULA(NAME, ATTRIBUTE)                                                \
    ATTRIBUTE static void NAME(const struct el_binary *p, const uint8_t *a, int64_t sa, \
                               const uint8_t *b, int64_t sb, uint8_t *out, int64_t n)  \
    {                                                                                 \
        if (p->kind == EL_XNN_ADD && p->is_uint8) EL_ROW_STRIDES(EL_XNN_ADD, 1);      \
        else if (p->kind == EL_XNN_ADD) EL_ROW_STRIDES(EL_XNN_ADD, 0);                \
        else if (p->is_uint8) EL_ROW_STRIDES(EL_XNN_MUL, 1);                          \
        else EL_ROW_STRIDES(EL_XNN_MUL, 0);                                           \
    }

EL_ROW_FORMULA(row_formula_base, )

static int avx2_allowed = 1; /* el_allow_avx2(0): the baseline loops (tests) */

#ifdef EL_X86_AVX2
EL_ROW_FORMULA(row_formula_avx2, EL_TARGET_AVX2)

int el_have_avx2(void)
{
    static int known = -1; /* a benign race: every thread computes the same value */
    if (known < 0) known = __builtin_cpu_supports("avx2") ? 1 : 0;
    return known && avx2_allowed;
}
#else
int el_have_avx2(void) { return 0; }
#define row_formula_avx2 row_formula_base
#endif

int el_allow_avx2(int allow)
{
    const int before = avx2_allowed;
    avx2_allowed = allow != 0;
    return before;
}

static void row_formula(const struct el_binary *p, const uint8_t *a, int64_t sa,
                        const uint8_t *b, int64_t sb, uint8_t *out, int64_t n)
{
    if (el_have_avx2()) row_formula_avx2(p, a, sa, b, sb, out, n);
    else row_formula_base(p, a, sa, b, sb, out, n);
}

/* ---- EL_TABLE rows ---- */

static void row_same(const uint8_t *restrict a, const uint8_t *restrict b,
                     const uint8_t *restrict table, uint8_t *restrict out, int64_t n)
{
    for (int64_t i = 0; i < n; i++) out[i] = table[((uint32_t)a[i] << 8) | b[i]];
}

static void row_b_scalar(const uint8_t *restrict a, uint8_t b, const uint8_t *restrict table,
                         uint8_t *restrict out, int64_t n)
{
    const uint8_t *restrict column = table + b; /* entries (x1 << 8) | b */
    for (int64_t i = 0; i < n; i++) out[i] = column[(uint32_t)a[i] << 8];
}

static void row_a_scalar(uint8_t a, const uint8_t *restrict b, const uint8_t *restrict table,
                         uint8_t *restrict out, int64_t n)
{
    const uint8_t *restrict row = table + ((uint32_t)a << 8); /* 256 entries: in L1 */
    for (int64_t i = 0; i < n; i++) out[i] = row[b[i]];
}

static void row_strided(const uint8_t *a, int64_t sa, const uint8_t *b, int64_t sb,
                        const uint8_t *restrict table, uint8_t *restrict out, int64_t n)
{
    for (int64_t i = 0; i < n; i++) out[i] = table[((uint32_t)a[i * sa] << 8) | b[i * sb]];
}

static void row_paths(const uint8_t *a, int64_t sa, const uint8_t *b, int64_t sb,
                      const uint32_t *restrict offsets, const uint8_t *restrict table,
                      uint8_t *restrict out, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = table[offsets[i] | ((uint32_t)a[i * sa] << 8) | b[i * sb]];
}

static void row_table(const struct el_binary *p, const uint8_t *a, int64_t sa,
                      const uint8_t *b, int64_t sb, const uint32_t *offsets, uint8_t *out,
                      int64_t n)
{
    if (offsets) row_paths(a, sa, b, sb, offsets, p->table, out, n);
    else if (sa == 1 && sb == 1) row_same(a, b, p->table, out, n);
    else if (sa == 1 && sb == 0) row_b_scalar(a, b[0], p->table, out, n);
    else if (sa == 0 && sb == 1) row_a_scalar(a[0], b, p->table, out, n);
    else row_strided(a, sa, b, sb, p->table, out, n);
}

void el_broadcast_rows(int ndim, const int64_t *shape, const int64_t *sa, const int64_t *sb,
                       int64_t begin, int64_t end,
                       void (*fn)(const void *ctx, const struct el_row *row), const void *ctx)
{
    const int last = ndim - 1;
    const int64_t n = shape[last];
    for (int64_t r = begin / n; r * n < end; r++) {
        struct el_row row = {r, 0, 0, r * n < begin ? begin - r * n : 0,
                             (r + 1) * n > end ? end - r * n : n};
        int64_t rest = r; /* r spelled in the outer dimensions */
        for (int d = last - 1; d >= 0; d--) {
            const int64_t at = rest % shape[d];
            rest /= shape[d];
            row.oa += at * sa[d];
            row.ob += at * sb[d];
        }
        fn(ctx, &row);
    }
}

static void binary_row(const void *ctx, const struct el_row *w)
{
    const struct el_binary *p = ctx;
    const int last = p->ndim - 1;
    const int64_t n = p->shape[last], sa = p->sa[last], sb = p->sb[last];
    const uint8_t *a = p->a + w->oa + w->from * sa, *b = p->b + w->ob + w->from * sb;
    const int64_t at = w->r * n + w->from;
    if (p->kind == EL_TABLE)
        row_table(p, a, sa, b, sb, p->offsets ? p->offsets + at : NULL, p->out + at,
                  w->to - w->from);
    else
        row_formula(p, a, sa, b, sb, p->out + at, w->to - w->from);
}

void el_binary(const struct el_binary *p, int64_t begin, int64_t end)
{
    el_broadcast_rows(p->ndim, p->shape, p->sa, p->sb, begin, end, binary_row, p);
}

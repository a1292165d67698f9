// Attention Lens fast path: WebAssembly 128-bit SIMD kernels for float32 and float64.
// Built by build-wasm.mjs (clang --target=wasm32, wasm-ld, shared imported memory so every
// worker_thread runs the same instance code over the same bytes) twice: attention.wasm with
// 128-bit SIMD, attention-relaxed.wasm with relaxed SIMD's fused multiply-add as well (pool.ts
// takes it where the engine validates it). Freestanding: no libc.
#include <wasm_simd128.h>

#define EXPORT(name) __attribute__((export_name(#name SUFSTR)))

enum { MASK_NONE = 0, MASK_BOOLEAN = 1, MASK_ADDITIVE = 2 };

/* One attention call, written by fast/plan.ts into the shared memory: the scale, then int32
   fields, byte offsets for pointers (0 = absent). Keep the order in step with ATTN_FIELDS there. */
typedef struct {
  double scale;
  int q_packed, k_packed, v_packed, nq, nk, d, dv; /* Q packed by pack_rows, K and V by pack */
  int scores, scaled, mask_out, masked, weights, out, ldo;
  int mask, mask_kind, causal, causal_offset, padding, masked_any;
  int row_flags, row_sums, scratch, scratch_stride; /* scratch: one slice per thread */
} Attn;

/* Four row vectors r0..r3 (columns [k, k + LANES) of 4 rows) stored in pack_rows's order, k-major:
   a 4 x 4 (float32) or 4 x 2 (float64) transpose. */
static inline void pack4_f32(v128_t r0, v128_t r1, v128_t r2, v128_t r3, float *dst) {
  v128_t low01 = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5), low23 = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5);
  v128_t high01 = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7), high23 = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
  wasm_v128_store(dst, wasm_i64x2_shuffle(low01, low23, 0, 2));
  wasm_v128_store(dst + 4, wasm_i64x2_shuffle(low01, low23, 1, 3));
  wasm_v128_store(dst + 8, wasm_i64x2_shuffle(high01, high23, 0, 2));
  wasm_v128_store(dst + 12, wasm_i64x2_shuffle(high01, high23, 1, 3));
}
static inline void pack4_f64(v128_t r0, v128_t r1, v128_t r2, v128_t r3, double *dst) {
  wasm_v128_store(dst, wasm_i64x2_shuffle(r0, r1, 0, 2));
  wasm_v128_store(dst + 2, wasm_i64x2_shuffle(r2, r3, 0, 2));
  wasm_v128_store(dst + 4, wasm_i64x2_shuffle(r0, r1, 1, 3));
  wasm_v128_store(dst + 6, wasm_i64x2_shuffle(r2, r3, 1, 3));
}

/* The maxima of neighbouring pairs of the 2·LANES values a, b (NaN-propagating), and LANES values
   stored as float64: the panel's pooling (pool_max). */
static inline v128_t pairmax_f32(v128_t a, v128_t b) {
  return wasm_f32x4_max(wasm_i32x4_shuffle(a, b, 0, 2, 4, 6), wasm_i32x4_shuffle(a, b, 1, 3, 5, 7));
}
static inline v128_t pairmax_f64(v128_t a, v128_t b) {
  return wasm_f64x2_max(wasm_i64x2_shuffle(a, b, 0, 2), wasm_i64x2_shuffle(a, b, 1, 3));
}
static inline void store_f64_f32(double *to, v128_t v) {
  wasm_v128_store(to, wasm_f64x2_promote_low_f32x4(v));
  wasm_v128_store(to + 2, wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(v, v, 2, 3, 0, 1)));
}
static inline void store_f64_f64(double *to, v128_t v) { wasm_v128_store(to, v); }

static inline float hmax_f32(v128_t v) {
  v = wasm_f32x4_max(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_max(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}
static inline float hsum_f32(v128_t v) {
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}
static inline double hmax_f64(v128_t v) {
  double a = wasm_f64x2_extract_lane(v, 0), b = wasm_f64x2_extract_lane(v, 1);
  return a > b ? a : b;
}
static inline double hsum_f64(v128_t v) { return wasm_f64x2_extract_lane(v, 0) + wasm_f64x2_extract_lane(v, 1); }

/* a·b + c. attention-relaxed.wasm (-DRELAXED_SIMD): relaxed SIMD's fused multiply-add, one
   instruction and one rounding where the engine uses the CPU's FMA; attention.wasm: a multiply
   and an add. clang 14 only knows the relaxed-SIMD draft, whose fma took its operands in the same
   order; build-wasm.mjs gives the instruction the standard's opcode (relaxed_madd: a·b + c). */
#ifdef RELAXED_SIMD
#define MADD_F32(a, b, c) __builtin_wasm_fma_f32x4(a, b, c)
#define MADD_F64(a, b, c) __builtin_wasm_fma_f64x2(a, b, c)
#else
#define MADD_F32(a, b, c) wasm_f32x4_add(c, wasm_f32x4_mul(a, b))
#define MADD_F64(a, b, c) wasm_f64x2_add(c, wasm_f64x2_mul(a, b))
#endif

/* Vector exp for x ≤ 0 (softmax's x − max), or NaN: n = round(x·log2 e), r = x − n·ln 2 (Cody–Waite),
   Taylor series of e^r on |r| ≤ ln2/2, times 2^n built in the exponent bits. Adding 1.5·2^23
   rounds x·log2 e to the integer n and leaves n in the low mantissa bits, so shifting those bits
   into the exponent makes 2^n with no float → int conversion (V8's saturating one costs ~7
   instructions). x is first raised to −88, where n = −127 and those bits wrap to exactly 0, so
   everything below (−∞ from a mask included) gives 0 with no compare and select: 17% faster rows
   than masking the underflow, with the same bits on [−87, 0]. */
static inline v128_t exp_f32(v128_t x) {
  const v128_t round = wasm_f32x4_splat(12582912.0f); /* 1.5·2^23 */
  x = wasm_f32x4_pmax(x, wasm_f32x4_splat(-88.0f));   /* n ≥ −127: 2^n from bits, 0 at −127 */
  v128_t t = MADD_F32(x, wasm_f32x4_splat(1.44269504088896341f), round);
  v128_t n = wasm_f32x4_sub(t, round);
  v128_t r = MADD_F32(n, wasm_f32x4_splat(-0.693359375f), x); /* n·ln2hi exact: fused or not, the same r */
  r = MADD_F32(n, wasm_f32x4_splat(2.12194440e-4f), r);
  v128_t p = wasm_f32x4_splat(1.0f / 5040);
  p = MADD_F32(p, r, wasm_f32x4_splat(1.0f / 720));
  p = MADD_F32(p, r, wasm_f32x4_splat(1.0f / 120));
  p = MADD_F32(p, r, wasm_f32x4_splat(1.0f / 24));
  p = MADD_F32(p, r, wasm_f32x4_splat(1.0f / 6));
  p = MADD_F32(p, r, wasm_f32x4_splat(0.5f));
  p = MADD_F32(p, r, wasm_f32x4_splat(1.0f));
  p = MADD_F32(p, r, wasm_f32x4_splat(1.0f));
  /* the bits of t are those of 1.5·2^23 plus n, whose high bits the shift drops */
  v128_t pow2 = wasm_i32x4_add(wasm_i32x4_shl(t, 23), wasm_i32x4_splat(127 << 23));
  return wasm_f32x4_mul(p, pow2);
}
static inline v128_t exp_f64(v128_t x) { /* as exp_f32, with 1.5·2^52; see below for the polynomial */
  const v128_t round = wasm_f64x2_splat(6755399441055744.0);
  x = wasm_f64x2_pmax(x, wasm_f64x2_splat(-709.0)); /* n ≥ −1023: 2^n from bits, 0 at −1023 */
  v128_t t = MADD_F64(x, wasm_f64x2_splat(1.4426950408889634), round);
  v128_t n = wasm_f64x2_sub(t, round);
  /* ln 2's high part has 21 zero bits, so n·ln2hi is exact and fused or not gives the same r */
  v128_t r = MADD_F64(n, wasm_f64x2_splat(-6.93147180369123816490e-01), x);
  r = MADD_F64(n, wasm_f64x2_splat(-1.90821492927058770002e-10), r);
  /* exp on |r| ≤ 0.35 by a degree-11 polynomial (Chebyshev fit, mpmath; coefficients rounded to
     float64: relative error below 7.3e-18, a sixteenth of an ulp), evaluated by Estrin's scheme:
     pairs c_k + c_{k+1}·r, then r² and r⁴ combine them, a chain of 4 dependent steps where Horner
     has 11. Exp rows of a 1024² head on one core: 3.2 ms with Taylor to r^13 by Horner, 2.3 with
     it by Estrin, 2.0 with this. Whole exp, without fused multiply-adds, on 35,000 points of
     [−700, 0] against mpmath: at most 4.4e-16 relative (2 ulp; Taylor by Horner: 2.2e-16). */
  v128_t r2 = wasm_f64x2_mul(r, r), r4 = wasm_f64x2_mul(r2, r2);
#define PAIR(c0, c1) MADD_F64(wasm_f64x2_splat(c1), r, wasm_f64x2_splat(c0))
  v128_t low = MADD_F64(PAIR(0.500000000000002, 0.16666666666666682), r2, PAIR(1.0, 1.0));
  v128_t mid = MADD_F64(PAIR(0.0013888888956173813, 0.0001984126989301463), r2, PAIR(0.041666666666473465, 0.008333333333318475));
  v128_t high = MADD_F64(PAIR(2.763413820537965e-07, 2.511118996532136e-08), r2, PAIR(2.4801481392218248e-05, 2.755723777338061e-06));
#undef PAIR
  v128_t p = MADD_F64(MADD_F64(high, r4, mid), r4, low);
  v128_t pow2 = wasm_i64x2_add(wasm_i64x2_shl(t, 52), wasm_i64x2_splat(1023LL << 52));
  return wasm_f64x2_mul(p, pow2);
}

/* Natural log for x > 0 (a head's weights, heads.h): x = m·2^e with m in [√2/2, √2), found in the
   bits (subtracting √2/2's bits carries into the exponent exactly when m ≥ √2), then
   ln m = 2·atanh(s) = 2(s + s³/3 + … + s^19/19) with s = (m − 1)/(m + 1), |s| ≤ 0.1716: the series'
   tail is below 1e-17, so ln x is within a few ulp of ln(m) + e·ln 2 (test/unit/heads/kernels.test.ts
   sweeps it against numpy). Subnormal x (below 2.2e-308)
   gets a wrong exponent; the entropy weighs ln x by x, so that costs under 1e-305. Zero, negative
   and NaN lanes give garbage the caller masks out. */
static inline v128_t log_f64(v128_t x) {
  const v128_t half_sqrt2 = wasm_i64x2_splat(0x3fe6a09e667f3bcdLL);
  v128_t t = wasm_i64x2_sub(x, half_sqrt2);
  v128_t m = wasm_i64x2_add(wasm_v128_and(t, wasm_i64x2_splat(0x000fffffffffffffLL)), half_sqrt2);
  /* e + 1023 by a logical shift (V8 has no arithmetic 64-bit one on x86: it emulates it), placed in
     the low bits of 2^52 and read as a float64: e with no integer → float conversion */
  v128_t biased = wasm_u64x2_shr(wasm_i64x2_add(t, wasm_i64x2_splat(1023LL << 52)), 52);
  v128_t e = wasm_f64x2_sub(wasm_v128_or(biased, wasm_f64x2_splat(4503599627370496.0)), wasm_f64x2_splat(4503599627370496.0 + 1023));
  v128_t s = wasm_f64x2_div(wasm_f64x2_sub(m, wasm_f64x2_splat(1.0)), wasm_f64x2_add(m, wasm_f64x2_splat(1.0)));
  v128_t z = wasm_f64x2_mul(s, s), z2 = wasm_f64x2_mul(z, z), z4 = wasm_f64x2_mul(z2, z2);
  /* Σ 2/(2k+1)·z^k for k = 0…9 by Estrin's scheme: pairs, then z², then z⁴ (a chain of 4 steps, not 9) */
#define PAIR(k) MADD_F64(wasm_f64x2_splat(2.0 / (2 * (k) + 3)), z, wasm_f64x2_splat(2.0 / (2 * (k) + 1)))
  v128_t low = MADD_F64(PAIR(2), z2, PAIR(0)), high = MADD_F64(PAIR(6), z2, PAIR(4));
  v128_t p = MADD_F64(MADD_F64(PAIR(8), z4, high), z4, low);
#undef PAIR
  return MADD_F64(e, wasm_f64x2_splat(0.69314718055994530942), wasm_f64x2_mul(s, p));
}

/* −a·ln a for the lanes a, 0 where a is 0, negative or NaN (0·ln 0 = 0; a > 0 is false for NaN). */
static inline v128_t neg_a_log_a(v128_t a) {
  return wasm_v128_and(wasm_f64x2_mul(a, wasm_f64x2_neg(log_f64(a))), wasm_f64x2_gt(a, wasm_f64x2_splat(0)));
}

/* log_f64's method in float32, for the entropy of float32 heads: the series to s^9, whose tail is
   below 3e-9, a tenth of float32's ulp at ln m's largest; so ln x is within a few float32 ulp.
   Subnormal x (below 1.2e-38) gets a wrong exponent, at a cost to the entropy under 1e-35. */
static inline v128_t log_f32(v128_t x) {
  const v128_t half_sqrt2 = wasm_i32x4_splat(0x3f3504f3);
  v128_t t = wasm_i32x4_sub(x, half_sqrt2);
  v128_t m = wasm_i32x4_add(wasm_v128_and(t, wasm_i32x4_splat(0x007fffff)), half_sqrt2);
  v128_t e = wasm_f32x4_convert_i32x4(wasm_i32x4_shr(t, 23));
  v128_t s = wasm_f32x4_div(wasm_f32x4_sub(m, wasm_f32x4_splat(1.0f)), wasm_f32x4_add(m, wasm_f32x4_splat(1.0f)));
  v128_t z = wasm_f32x4_mul(s, s);
  v128_t p = MADD_F32(wasm_f32x4_splat(2.0f / 9), z, wasm_f32x4_splat(2.0f / 7));
  p = MADD_F32(p, z, wasm_f32x4_splat(2.0f / 5));
  p = MADD_F32(p, z, wasm_f32x4_splat(2.0f / 3));
  p = MADD_F32(p, z, wasm_f32x4_splat(2.0f));
  return MADD_F32(e, wasm_f32x4_splat(0.693147180559945f), wasm_f32x4_mul(s, p));
}

/* −a·ln a for float32 lanes, as neg_a_log_a. */
static inline v128_t neg_a_log_a_f32(v128_t a) {
  return wasm_v128_and(wasm_f32x4_mul(a, wasm_f32x4_neg(log_f32(a))), wasm_f32x4_gt(a, wasm_f32x4_splat(0)));
}

/* The sum of a float32 vector's lanes as a float64 pair (their sum is the two lanes' sum). */
static inline v128_t widen_f32(v128_t v) {
  return wasm_f64x2_add(wasm_f64x2_promote_low_f32x4(v), wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(v, v, 2, 3, 0, 1)));
}
static inline v128_t widen_f64(v128_t v) {
  return v;
}

/* a·ln(a/m) + b·ln(b/m), m = (a + b)/2, for the lanes (twice their Jensen–Shannon term), each product
   0 where its weight is 0, negative or NaN (0·ln 0 = 0). With lo, hi the smaller and larger of a and b
   and r = lo/m from one division, hi/m = 2 − r: the larger ratio lies in [1, 2], where that
   subtraction costs at most an ulp, while the smaller one, however small, keeps its own precision.
   The sum's derivative in r is 0 at the exact r, so r's rounding costs only to second order: a
   small divergence keeps its relative precision, and equal lanes give r = 1, ln 1 = 0, exactly 0. */
static inline v128_t jsd_terms(v128_t a, v128_t b) {
  const v128_t zero = wasm_f64x2_splat(0);
  v128_t lo = wasm_f64x2_pmin(a, b), hi = wasm_f64x2_pmax(a, b);
  v128_t r = wasm_f64x2_div(wasm_f64x2_add(lo, lo), wasm_f64x2_add(a, b));
  v128_t low = wasm_v128_and(wasm_f64x2_mul(lo, log_f64(r)), wasm_f64x2_gt(lo, zero));
  v128_t high = wasm_v128_and(wasm_f64x2_mul(hi, log_f64(wasm_f64x2_sub(wasm_f64x2_splat(2.0), r))), wasm_f64x2_gt(hi, zero));
  return wasm_f64x2_add(low, high);
}

#define T float
#define LANES 4
#define SUF _f32
#define SUFSTR "_f32"
#define TR 16  /* query rows per tile: 16 rows x 4096 keys x 4 B = 256 KB, half of L2 */
#define FB 256 /* keys per online-softmax block */
#define VADD wasm_f32x4_add
#define VSUB wasm_f32x4_sub
#define VMUL wasm_f32x4_mul
#define VMADD MADD_F32
#define VMAX wasm_f32x4_pmax
#define VSPLAT wasm_f32x4_splat
#define VLOADSPLAT wasm_v128_load32_splat
#define VMAXNAN wasm_f32x4_max
#define VPAIRMAX pairmax_f32
#define VSTORE_F64 store_f64_f32
#define SMAXNAN __builtin_wasm_max_f32
#define PACK4 pack4_f32
#define VLANE0(v) wasm_f32x4_extract_lane(v, 0)
#define VEXP exp_f32
#define VHMAX hmax_f32
#define VHSUM hsum_f32
#define VNEG_A_LOG_A neg_a_log_a_f32
#define VWIDEN widen_f32
#include "kernel.h"
#undef T
#undef LANES
#undef SUF
#undef SUFSTR
#undef TR
#undef FB
#undef VADD
#undef VSUB
#undef VMUL
#undef VMADD
#undef VMAX
#undef VSPLAT
#undef VLOADSPLAT
#undef VMAXNAN
#undef VPAIRMAX
#undef VSTORE_F64
#undef SMAXNAN
#undef PACK4
#undef VLANE0
#undef VEXP
#undef VHMAX
#undef VHSUM
#undef VNEG_A_LOG_A
#undef VWIDEN

#define T double
#define LANES 2
#define SUF _f64
#define SUFSTR "_f64"
#define TR 8 /* same bytes per tile as float32 */
#define FB 128
#define VADD wasm_f64x2_add
#define VSUB wasm_f64x2_sub
#define VMUL wasm_f64x2_mul
#define VMADD MADD_F64
#define VMAX wasm_f64x2_pmax
#define VSPLAT wasm_f64x2_splat
#define VLOADSPLAT wasm_v128_load64_splat
#define VMAXNAN wasm_f64x2_max
#define VPAIRMAX pairmax_f64
#define VSTORE_F64 store_f64_f64
#define SMAXNAN __builtin_wasm_max_f64
#define PACK4 pack4_f64
#define VLANE0(v) wasm_f64x2_extract_lane(v, 0)
#define VEXP exp_f64
#define VHMAX hmax_f64
#define VHSUM hsum_f64
#define VNEG_A_LOG_A neg_a_log_a
#define VWIDEN widen_f64
#include "kernel.h"


// Attention Lens fast path: WebAssembly 128-bit SIMD kernels for float32 and float64.
// Built by scripts/build-wasm.mjs (clang --target=wasm32, wasm-ld, shared imported memory so
// two worker_threads run the same instance code over the same bytes). Freestanding: no libc.
#include <wasm_simd128.h>

#define EXPORT(name) __attribute__((export_name(#name SUFSTR)))

enum { MASK_NONE = 0, MASK_BOOLEAN = 1, MASK_ADDITIVE = 2 };

/* One attention call, written by fast/plan.ts into the shared memory: the scale, then int32
   fields, byte offsets for pointers (0 = absent). Keep the order in step with ATTN_FIELDS there. */
typedef struct {
  double scale;
  int q, ldq, k_packed, v_packed, nq, nk, d, dv; /* K and V packed by pack_* */
  int scores, scaled, mask_out, masked, weights, out, ldo;
  int mask, mask_kind, causal, causal_offset, padding, masked_any;
  int row_flags, row_sums, scratch, scratch_stride, threads;
} Attn;

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

#define T float
#define LANES 4
#define SUF _f32
#define SUFSTR "_f32"
#define TR 16  /* query rows per tile: 16 rows x 4096 keys x 4 B = 256 KB, half of L2 */
#define FB 256 /* keys per online-softmax block */
#define VADD wasm_f32x4_add
#define VSUB wasm_f32x4_sub
#define VMUL wasm_f32x4_mul
#define VMAX wasm_f32x4_pmax
#define VSPLAT wasm_f32x4_splat
#define VLANE0(v) wasm_f32x4_extract_lane(v, 0)
#define VEXP exp_f32
#define VHMAX hmax_f32
#define VHSUM hsum_f32
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
#undef VMAX
#undef VSPLAT
#undef VLANE0
#undef VEXP
#undef VHMAX
#undef VHSUM

#define T double
#define LANES 2
#define SUF _f64
#define SUFSTR "_f64"
#define TR 8 /* same bytes per tile as float32 */
#define FB 128
#define VADD wasm_f64x2_add
#define VSUB wasm_f64x2_sub
#define VMUL wasm_f64x2_mul
#define VMAX wasm_f64x2_pmax
#define VSPLAT wasm_f64x2_splat
#define VLANE0(v) wasm_f64x2_extract_lane(v, 0)
#define VEXP exp_f64
#define VHMAX hmax_f64
#define VHSUM hsum_f64
#include "kernel.h"

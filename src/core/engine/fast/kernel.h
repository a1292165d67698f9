// One precision's kernels, instantiated twice by attention.c (float32: 4 lanes, float64: 2 lanes).
// Expects T, LANES, SUF (name suffix), TR, FB, and the vector helpers VADD VMUL VMADD VSUB VMAX VSPLAT
// VLOADSPLAT VLANE0 VEXP VHMAX VHSUM PACK4 VMAXNAN SMAXNAN VPAIRMAX VSTORE_F64 VNEG_A_LOG_A VWIDEN (attention.c). Everything is a loop over storage
// addressed by raw pointers into the shared memory; nothing here touches the C stack (no arrays,
// no address-taken locals), because every thread's instance starts with the same stack pointer in
// the one shared memory.
// Every export ends in (part, parts) and does the round-robin share `part` of `parts` of its work;
// the threads claim parts one at a time (fast-thread.js), so any part may run on any thread.

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SUF)
#define NB (2 * LANES) /* columns of the register-blocked micro-kernel: 2 vectors */
#define MR 4           /* rows of the micro-kernel: 4 x 2 vectors = 8 accumulators */

/* C[0:rows, 0:NB] (+)= A · B[0:K, 0:NB], the one register-blocked micro-kernel. A is one quad of
   MR packed rows (AP[k·MR + r] = A[r][k], rows ≥ `rows` zero padding) and B one packed panel, so
   every load is a constant offset from one of two pointers: the addressing folds into the loads
   (build-wasm.mjs) and per k the loop issues little besides 2 + MR loads and 16 multiplies and
   adds. One core, against four strided row pointers into A: a 1024² head's QKᵀ 3.8 against 4.3
   ms, one head's X·W_Q (1024 x 512 · 512 x 64) 1.8 against 2.1 ms. */
static inline void FN(micro)(const T *AP, const T *B, T *C, int ldc, int K, int rows, int acc, T *vmax) {
  v128_t c00, c01, c10, c11, c20, c21, c30, c31;
  c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = VSPLAT(0);
  if (acc) {
    c00 = wasm_v128_load(C); c01 = wasm_v128_load(C + LANES);
    if (rows > 1) { c10 = wasm_v128_load(C + ldc); c11 = wasm_v128_load(C + ldc + LANES); }
    if (rows > 2) { c20 = wasm_v128_load(C + 2 * ldc); c21 = wasm_v128_load(C + 2 * ldc + LANES); }
    if (rows > 3) { c30 = wasm_v128_load(C + 3 * ldc); c31 = wasm_v128_load(C + 3 * ldc + LANES); }
  }
  for (int k = 0; k < K; k++) {
    v128_t b0 = wasm_v128_load(B), b1 = wasm_v128_load(B + LANES);
    v128_t a = VLOADSPLAT(AP);
    c00 = VMADD(a, b0, c00); c01 = VMADD(a, b1, c01);
    a = VLOADSPLAT(AP + 1);
    c10 = VMADD(a, b0, c10); c11 = VMADD(a, b1, c11);
    a = VLOADSPLAT(AP + 2);
    c20 = VMADD(a, b0, c20); c21 = VMADD(a, b1, c21);
    a = VLOADSPLAT(AP + 3);
    c30 = VMADD(a, b0, c30); c31 = VMADD(a, b1, c31);
    B += NB;
    AP += MR;
  }
  wasm_v128_store(C, c00); wasm_v128_store(C + LANES, c01);
  if (rows > 1) { wasm_v128_store(C + ldc, c10); wasm_v128_store(C + ldc + LANES, c11); }
  if (rows > 2) { wasm_v128_store(C + 2 * ldc, c20); wasm_v128_store(C + 2 * ldc + LANES, c21); }
  if (rows > 3) { wasm_v128_store(C + 3 * ldc, c30); wasm_v128_store(C + 3 * ldc + LANES, c31); }
  if (vmax) { /* each row's running maximum, a vector of LANES per row: pmax keeps the running one over NaN */
    wasm_v128_store(vmax, VMAX(VMAX(wasm_v128_load(vmax), c00), c01));
    if (rows > 1) wasm_v128_store(vmax + LANES, VMAX(VMAX(wasm_v128_load(vmax + LANES), c10), c11));
    if (rows > 2) wasm_v128_store(vmax + 2 * LANES, VMAX(VMAX(wasm_v128_load(vmax + 2 * LANES), c20), c21));
    if (rows > 3) wasm_v128_store(vmax + 3 * LANES, VMAX(VMAX(wasm_v128_load(vmax + 3 * LANES), c30), c31));
  }
}

/* The ragged right edge (a panel narrower than NB), one dot product per element. */
static void FN(edge)(const T *AP, const T *B, T *C, int ldc, int M, int N, int K, int acc, T *vmax) {
  for (int i = 0; i < M; i++) {
    const T *a = AP + (i / MR) * K * MR + i % MR;
    for (int j = 0; j < N; j++) {
      T s = acc ? C[i * ldc + j] : 0;
      for (int k = 0; k < K; k++) s += a[k * MR] * B[k * NB + j];
      C[i * ldc + j] = s;
      if (vmax && vmax[i * LANES] < s) vmax[i * LANES] = s;
    }
  }
}

/* C[0:M, 0:N] (+)= A · B, A packed by pack_rows (quad q at AP + q·K·MR) and B in panels of NB
   columns (panel p at BP + p·stride, its row k at + k·NB: contiguous, so the micro-kernel streams
   it without cache-set conflicts). Panels outermost, so each stays in L1 while every quad passes
   over it. */
static void FN(block)(const T *AP, const T *BP, int stride, T *C, int ldc, int M, int N, int K, int acc, T *vmax) {
  for (int j = 0, p = 0; j < N; j += NB, p++) {
    const T *panel = BP + p * stride;
    if (N - j < NB) {
      FN(edge)(AP, panel, C + j, ldc, M, N - j, K, acc, vmax);
      continue;
    }
    for (int i = 0; i < M; i += MR)
      FN(micro)(AP + i * K, panel, C + i * ldc + j, ldc, K, M - i < MR ? M - i : MR, acc, vmax ? vmax + i * LANES : 0);
  }
}

/* C = A · B, A packed by pack_rows and B by pack, for rows [0, M) in blocks of 16 dealt
   round-robin to the parts; 64-column slabs of B outermost so a slab (K x 64) stays in L2 while
   the rows pass. */
EXPORT(gemm) void FN(gemm)(const T *AP, const T *BP, T *C, int ldc, int M, int N, int K, int part, int parts) {
  for (int j = 0; j < N; j += 64) {
    int nc = N - j < 64 ? N - j : 64;
    for (int i = 16 * part; i < M; i += 16 * parts) {
      int mr = M - i < 16 ? M - i : 16;
      FN(block)(AP + i * K, BP + (j / NB) * K * NB, K * NB, C + i * ldc + j, ldc, mr, nc, K, 0, 0);
    }
  }
}

/* Packs `rows` (≤ MR) rows of A (leading dimension lda), columns [0, K), into one quad with row
   stride MR (dst[k·MR + r] = A[r][k]), zeros for the missing rows. */
static void FN(pack_quad)(const T *A, int lda, T *dst, int rows, int K) {
  int k = 0;
  if (rows == MR)
    for (; k + LANES <= K; k += LANES)
      PACK4(wasm_v128_load(A + k), wasm_v128_load(A + lda + k), wasm_v128_load(A + 2 * lda + k), wasm_v128_load(A + 3 * lda + k), dst + k * MR);
  for (; k < K; k++)
    for (int r = 0; r < MR; r++) dst[k * MR + r] = r < rows ? A[r * lda + k] : 0;
}

/* Packs A (M x K, leading dimension lda) into quads of MR rows for the micro-kernel: quad q at
   dst + q·ldp·MR, these K columns at + k0·MR within it (ldp, k0: the heads' outputs pack straight
   into their columns of the concat's packing). The last quad is zero-padded. Quads round-robin
   over parts. */
EXPORT(pack_rows) void FN(pack_rows)(const T *src, int lda, T *dst, int M, int K, int ldp, int k0, int part, int parts) {
  for (int q = part; q * MR < M; q += parts)
    FN(pack_quad)(src + q * MR * lda, lda, dst + (q * ldp + k0) * MR, M - q * MR < MR ? M - q * MR : MR, K);
}

/* Softmax's last step fused with packing the weights for A·V: the MR rows of w (leading dimension
   ld) times their factors f[0..MR) (1 / row sum), written back and packed as pack_quad packs them;
   sums[r] = the sum of row r's results (the row-sum check), added in scale_row's order. One pass
   over the rows instead of two. */
static void FN(normalize_quad)(T *w, int ld, const T *f, T *dst, int K, T *sums) {
  const T g0 = f[0], g1 = f[1], g2 = f[2], g3 = f[3]; /* f may be sums */
  v128_t f0 = VSPLAT(g0), f1 = VSPLAT(g1), f2 = VSPLAT(g2), f3 = VSPLAT(g3);
  v128_t s0 = VSPLAT(0), s1 = s0, s2 = s0, s3 = s0;
  T *w0 = w, *w1 = w + ld, *w2 = w + 2 * ld, *w3 = w + 3 * ld;
  int k = 0;
  for (; k + LANES <= K; k += LANES) {
    v128_t r0 = VMUL(wasm_v128_load(w0 + k), f0), r1 = VMUL(wasm_v128_load(w1 + k), f1);
    v128_t r2 = VMUL(wasm_v128_load(w2 + k), f2), r3 = VMUL(wasm_v128_load(w3 + k), f3);
    wasm_v128_store(w0 + k, r0); wasm_v128_store(w1 + k, r1);
    wasm_v128_store(w2 + k, r2); wasm_v128_store(w3 + k, r3);
    s0 = VADD(s0, r0); s1 = VADD(s1, r1); s2 = VADD(s2, r2); s3 = VADD(s3, r3);
    PACK4(r0, r1, r2, r3, dst + k * MR);
  }
  T t0 = VHSUM(s0), t1 = VHSUM(s1), t2 = VHSUM(s2), t3 = VHSUM(s3);
  for (; k < K; k++) {
    t0 += dst[k * MR] = w0[k] *= g0;
    t1 += dst[k * MR + 1] = w1[k] *= g1;
    t2 += dst[k * MR + 2] = w2[k] *= g2;
    t3 += dst[k * MR + 3] = w3[k] *= g3;
  }
  sums[0] = t0; sums[1] = t1; sums[2] = t2; sums[3] = t3;
}

/* Packs B (K x N) into panels of NB columns, zero-padded: dst[p][k][c] = B[k][p·NB + c], where
   B[k][j] = src[k·ld + j], or src[j·ld + k] when `transposed` (Kᵀ from K without a transpose).
   Panels round-robin over parts. */
EXPORT(pack) void FN(pack)(const T *src, int ld, int transposed, T *dst, int K, int N, int part, int parts) {
  int panels = (N + NB - 1) / NB;
  for (int p = part; p < panels; p += parts) {
    T *panel = dst + p * K * NB;
    if (!transposed && p * NB + NB <= N) { /* a full panel of B as written: two vectors per row */
      for (int k = 0; k < K; k++) {
        const T *from = src + k * ld + p * NB;
        wasm_v128_store(panel + k * NB, wasm_v128_load(from));
        wasm_v128_store(panel + k * NB + LANES, wasm_v128_load(from + LANES));
      }
      continue;
    }
    for (int k = 0; k < K; k++)
      for (int c = 0; c < NB; c++) {
        int j = p * NB + c;
        panel[k * NB + c] = j < N ? (transposed ? src[j * ld + k] : src[k * ld + j]) : 0;
      }
  }
}

/* dst[r, c] = src[r, c] for an r x c block between two leading dimensions (heads ⇄ concat). */
EXPORT(copy2d) void FN(copy2d)(const T *src, int lds, T *dst, int ldd, int rows, int cols, int part, int parts) {
  for (int r = part; r < rows; r += parts)
    for (int c = 0; c < cols; c++) dst[r * ldd + c] = src[r * lds + c];
}

/* The panel's max pooling (panel/model.ts viewOf) of rows [r0, r1) x columns [c0, c1) of src
   (leading dimension ld) in blocks of rb x cb: dst[r][c] (float64, row-major) = the largest value
   of its block, NaN when the block holds one (a pooled cell must not hide a NaN). Per output row,
   the block's rows are reduced into `row` (c1 - c0 values) by vector max, then its columns: by
   vector for blocks 1 or 2 wide (up to 1024 columns), else one by one. One thread (part, parts =
   0, 1): the engine worker pools right after a run, on its own thread. */
EXPORT(pool_max) void FN(pool_max)(const T *src, int ld, int r0, int r1, int c0, int c1, int rb, int cb, double *dst, T *row, int part, int parts) {
  const int width = c1 - c0, cols = (width + cb - 1) / cb;
  for (int out = part, r = r0 + part * rb; r < r1; out += parts, r += parts * rb) {
    int last = r + rb < r1 ? r + rb : r1;
    const T *first = src + (long)r * ld + c0, *second = last - r > 1 ? first + ld : first;
    int c = 0;
    for (; c + LANES <= width; c += LANES) /* wasm max: NaN if either is */
      wasm_v128_store(row + c, VMAXNAN(wasm_v128_load(first + c), wasm_v128_load(second + c)));
    for (; c < width; c++) row[c] = SMAXNAN(first[c], second[c]);
    for (int rr = r + 2; rr < last; rr++) {
      const T *line = src + (long)rr * ld + c0;
      for (c = 0; c + LANES <= width; c += LANES)
        wasm_v128_store(row + c, VMAXNAN(wasm_v128_load(row + c), wasm_v128_load(line + c)));
      for (; c < width; c++) row[c] = SMAXNAN(row[c], line[c]);
    }
    double *to = dst + (long)out * cols;
    c = 0;
    if (cb == 1)
      for (; c + LANES <= cols; c += LANES) VSTORE_F64(to + c, wasm_v128_load(row + c));
    else if (cb == 2)
      for (; c + LANES <= cols && 2 * (c + LANES) <= width; c += LANES)
        VSTORE_F64(to + c, VPAIRMAX(wasm_v128_load(row + 2 * c), wasm_v128_load(row + 2 * c + LANES)));
    for (int k = c * cb; c < cols; c++) {
      T m = row[k++];
      for (int end = k - 1 + cb < width ? k - 1 + cb : width; k < end; k++) m = SMAXNAN(m, row[k]);
      to[c] = m;
    }
  }
}

/* The additive mask at (i, j): the explicit mask (additive, or boolean 0 → −∞), causal, padding. */
static inline T FN(mask_at)(const Attn *a, int i, int j) {
  T m = 0;
  if (a->mask_kind == MASK_ADDITIVE) m = ((const T *)a->mask)[i * a->nk + j];
  else if (a->mask_kind == MASK_BOOLEAN && ((const T *)a->mask)[i * a->nk + j] == 0) m = -__builtin_inf();
  if (a->causal && j > i + a->causal_offset) m = -__builtin_inf();
  if (a->padding && ((const T *)a->padding)[j] != 0) m = -__builtin_inf();
  return m;
}

/* s[0:n)·scale into w (and into `scaled` when given), vectorised; returns the row max. */
static T FN(scale_row_max)(const T *s, T scale, int n, T *scaled, T *w) {
  v128_t vs = VSPLAT(scale), vmax = VSPLAT(-__builtin_inf());
  int j = 0;
  for (; j + LANES <= n; j += LANES) {
    v128_t v = VMUL(wasm_v128_load(s + j), vs);
    if (scaled) wasm_v128_store(scaled + j, v);
    wasm_v128_store(w + j, v);
    vmax = VMAX(vmax, v);
  }
  T max = VHMAX(vmax);
  for (; j < n; j++) {
    T v = s[j] * scale;
    if (scaled) scaled[j] = v;
    w[j] = v;
    if (v > max) max = v;
  }
  return max;
}

/* Row i of raw scores s[0:n) (keys j0..j0+n) → scale, mask, into w; optional copies of the scaled
   and masked rows and of the mask. Returns the row max. */
static T FN(prepare_row)(const Attn *a, int i, int j0, int n, const T *s, T *scaled, T *maskrow, T *masked, T *w) {
  T scale = (T)a->scale;
  if (!a->masked_any) return FN(scale_row_max)(s, scale, n, scaled, w);
  T max = -__builtin_inf();
  for (int j = 0; j < n; j++) {
    T v = s[j] * scale;
    if (scaled) scaled[j] = v;
    T m = FN(mask_at)(a, i, j0 + j);
    if (maskrow) maskrow[j] = m;
    v = v + m;
    if (masked) masked[j] = v;
    w[j] = v;
    if (v > max) max = v;
  }
  return max;
}

/* Row i of causal attention's raw scores s, seeing its first `valid` keys: w[j] = s[j]·scale there
   and −∞ from there to `end`; returns their max. The numbers prepare_row gives that row (its mask
   adds 0 to the keys seen), without its mask lookups. */
static T FN(causal_row)(const T *s, T scale, int valid, int end, T *w) {
  T max = FN(scale_row_max)(s, scale, valid, 0, w);
  for (int j = valid; j < end; j++) w[j] = -__builtin_inf();
  return max;
}

/* w[0:n) = exp(src·scale − max), and src·scale into `scaled` when given; returns the sum. In place
   (src = w, scale 1: the product is exact) after prepare_row. */
static T FN(exp_row)(const T *src, T scale, T *scaled, T *w, int n, T max) {
  v128_t vm = VSPLAT(max), vs = VSPLAT(scale), vsum = VSPLAT(0);
  int j = 0;
  for (; j + LANES <= n; j += LANES) {
    v128_t v = VMUL(wasm_v128_load(src + j), vs);
    if (scaled) wasm_v128_store(scaled + j, v);
    v128_t e = VEXP(VSUB(v, vm));
    wasm_v128_store(w + j, e);
    vsum = VADD(vsum, e);
  }
  T sum = VHSUM(vsum);
  for (; j < n; j++) {
    T v = src[j] * scale;
    if (scaled) scaled[j] = v;
    v128_t e = VEXP(VSPLAT(v - max));
    T ej = VLANE0(e);
    w[j] = ej;
    sum += ej;
  }
  return sum;
}

/* w[0:n) *= f; returns the new sum (the row-sum check, free while the row is in cache). */
static T FN(scale_row)(T *w, int n, T f) {
  v128_t vf = VSPLAT(f), vsum = VSPLAT(0);
  int j = 0;
  for (; j + LANES <= n; j += LANES) {
    v128_t v = VMUL(wasm_v128_load(w + j), vf);
    wasm_v128_store(w + j, v);
    vsum = VADD(vsum, v);
  }
  T sum = VHSUM(vsum);
  for (; j < n; j++) sum += (w[j] *= f);
  return sum;
}

static void FN(zero_rows)(T *p, int ld, int rows, int cols) {
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) p[r * ld + c] = 0;
}

/* Full attention with every n x n step materialised, one fused pass per tile of TR query rows:
   raw scores of the tile (micro-kernel over packed Kᵀ panels), then per row scale/mask/max, exp/sum,
   normalise while the row is in cache, then the tile's weights packed into this thread's scratch
   and its A·V over all keys at once (streaming the packed weights and V panels from L2 beat
   cutting the keys into L1-sized chunks, whose partial sums cost a load and store of the output
   each: 3.9 against 4.3 ms per 1024² head, and 61.5 against 65.2 at 4096²). Tiles go round-robin
   to parts, which balances causal masks. A causal mask with nothing else to keep (a model layer's
   weights alone) stops each tile at its last row's diagonal, rounded up to whole panels: scores,
   exps, normalising and A·V skip the keys no row of the tile sees, and the rest of each row is
   written 0. The numbers are the general path's: the keys skipped added only exact zeros to the
   same sums in the same order (the stop is a multiple of the vectors' width). */
EXPORT(attention) void FN(attention)(const Attn *a, int part, int parts, int thread) {
  const int nq = a->nq, nk = a->nk, d = a->d, dv = a->dv;
  const T *QP = (const T *)a->q_packed, *KP = (const T *)a->k_packed, *VP = (const T *)a->v_packed;
  T *S = (T *)a->scores, *W = (T *)a->weights, *O = (T *)a->out;
  T *tile = (T *)(a->scratch + thread * a->scratch_stride); /* TR x nk weights, packed */
  T *sums = (T *)a->row_sums;
  /* Without a mask and with a positive scale, the scores' row maxima come out of the micro-kernel
     (into the tile, free until the weights are packed) and max(s·scale) = max(s)·scale, so scaling
     and exp are one pass over each row, not two. */
  const T scale = (T)a->scale;
  T *vmax = a->masked_any || !(scale > 0) ? 0 : tile;
  const int causal_only = a->causal && a->mask_kind == MASK_NONE && !a->padding && !a->scaled && !a->masked && !a->mask_out;
  for (int i0 = TR * part; i0 < nq; i0 += TR * parts) {
    int rows = nq - i0 < TR ? nq - i0 : TR;
    int kend = nk; /* the keys any row of the tile sees */
    if (causal_only) {
      int seen = i0 + rows + a->causal_offset;
      kend = seen <= 0 ? 0 : (seen + NB - 1) / NB * NB;
      if (kend > nk) kend = nk;
    }
    if (vmax)
      for (int r = 0; r < rows; r++) wasm_v128_store(vmax + r * LANES, VSPLAT(-__builtin_inf()));
    FN(block)(QP + i0 * d, KP, d * NB, S + i0 * nk, nk, rows, kend, d, 0, vmax);
    for (int i = i0; i < i0 + rows; i++) {
      long off = (long)i * nk;
      T *w = W + off, *scaled = a->scaled ? (T *)a->scaled + off : 0;
      if (causal_only) {
        int valid = i + 1 + a->causal_offset < nk ? i + 1 + a->causal_offset : nk;
        T max = valid > 0 ? FN(causal_row)(S + off, scale, valid, kend, w) : -__builtin_inf();
        for (int j = kend; j < nk; j++) w[j] = 0;
        if (max == -__builtin_inf()) {
          for (int j = 0; j < kend; j++) w[j] = 0;
          ((unsigned char *)a->row_flags)[i] = 1;
          sums[i] = 0;
          continue;
        }
        sums[i] = (T)1 / FN(exp_row)(w, 1, 0, w, kend, max);
        continue;
      }
      T max = vmax ? VHMAX(wasm_v128_load(vmax + (i - i0) * LANES)) * scale : -__builtin_inf();
      if (max != -__builtin_inf()) {
        sums[i] = (T)1 / FN(exp_row)(S + off, scale, scaled, w, nk, max); /* the factor, until normalize_quad */
        continue;
      }
      max = FN(prepare_row)(a, i, 0, nk, S + off, scaled, a->mask_out ? (T *)a->mask_out + off : 0,
                            a->masked ? (T *)a->masked + off : 0, w);
      if (max == -__builtin_inf()) {
        for (int j = 0; j < nk; j++) w[j] = 0;
        ((unsigned char *)a->row_flags)[i] = 1;
        sums[i] = 0; /* as the factor: the zero row stays zero, its sum 0 */
        continue;
      }
      sums[i] = (T)1 / FN(exp_row)(w, 1, 0, w, nk, max);
    }
    /* Normalised and packed for A·V in one pass per quad of full rows; a last partial quad row by row. */
    int full = rows / MR * MR;
    for (int q = 0; q < full; q += MR)
      FN(normalize_quad)(W + (long)(i0 + q) * nk, nk, sums + i0 + q, tile + q * kend, kend, sums + i0 + q);
    for (int i = i0 + full; i < i0 + rows; i++) sums[i] = FN(scale_row)(W + (long)i * nk, kend, sums[i]);
    if (full < rows) FN(pack_rows)(W + (long)(i0 + full) * nk, nk, tile + full * kend, rows - full, kend, kend, 0, 0, 1);
    FN(block)(tile, VP, nk * NB, O + i0 * a->ldo, a->ldo, rows, dv, kend, 0, 0);
  }
}

/* Output only, O(n·d) memory: online softmax (FlashAttention) over key blocks of FB. The tile's
   scores, their packing, running max and running sum live in the scratch slice of the thread
   running this part (`thread`, which fast-thread.js passes after every kernel's (part, parts)). */
EXPORT(flash) void FN(flash)(const Attn *a, int part, int parts, int thread) {
  const int nq = a->nq, nk = a->nk, d = a->d, dv = a->dv;
  const T *QP = (const T *)a->q_packed, *KP = (const T *)a->k_packed, *VP = (const T *)a->v_packed;
  T *O = (T *)a->out;
  T *P = (T *)(a->scratch + thread * a->scratch_stride); /* TR x FB exp scores, packed */
  T *S = P + TR * FB;                                     /* TR x FB scores of the tile */
  T *m = S + TR * FB, *l = m + TR;                        /* running max and sum per row */
  for (int i0 = TR * part; i0 < nq; i0 += TR * parts) {
    int rows = nq - i0 < TR ? nq - i0 : TR;
    FN(zero_rows)(O + i0 * a->ldo, a->ldo, rows, dv);
    for (int r = 0; r < rows; r++) { m[r] = -__builtin_inf(); l[r] = 0; }
    for (int k0 = 0; k0 < nk; k0 += FB) {
      int kc = nk - k0 < FB ? nk - k0 : FB;
      FN(block)(QP + i0 * d, KP + k0 * d, d * NB, S, FB, rows, kc, d, 0, 0);
      for (int r = 0; r < rows; r++) {
        T *s = S + r * FB;
        T bmax = FN(prepare_row)(a, i0 + r, k0, kc, s, 0, 0, 0, s);
        if (bmax == -__builtin_inf()) { for (int j = 0; j < kc; j++) s[j] = 0; continue; }
        T mnew = bmax > m[r] ? bmax : m[r];
        if (mnew > m[r] && m[r] != -__builtin_inf()) {
          T corr = VLANE0(VEXP(VSPLAT(m[r] - mnew)));
          l[r] *= corr;
          FN(scale_row)(O + (i0 + r) * a->ldo, dv, corr);
        }
        m[r] = mnew;
        l[r] += FN(exp_row)(s, 1, 0, s, kc, mnew);
      }
      FN(pack_rows)(S, FB, P, rows, kc, kc, 0, 0, 1);
      FN(block)(P, VP + k0 * NB, nk * NB, O + i0 * a->ldo, a->ldo, rows, dv, kc, 1, 0);
    }
    for (int r = 0; r < rows; r++) {
      if (m[r] == -__builtin_inf()) { ((unsigned char *)a->row_flags)[i0 + r] = 1; continue; }
      FN(scale_row)(O + (i0 + r) * a->ldo, dv, (T)1 / l[r]);
    }
  }
}

/* 1 + the column of the last non-zero of row (0 for a zero row: causal attention's rows end at the
   diagonal), its zero tail skipped four vectors at a time. */
static inline int FN(row_end)(const T *row, int cols) {
  int end = cols;
  while (end >= 4 * LANES && !wasm_v128_any_true(wasm_v128_or(
      wasm_v128_or(wasm_v128_load(row + end - LANES), wasm_v128_load(row + end - 2 * LANES)),
      wasm_v128_or(wasm_v128_load(row + end - 3 * LANES), wasm_v128_load(row + end - 4 * LANES)))))
    end -= 4 * LANES;
  while (end > 0 && row[end - 1] == 0) end--;
  return end;
}

/* The head analyses' one pass over a group of `heads` heads (heads/kernels.ts StackPass), each
   rows x cols, `stride` elements apart from w: per head h and row i,
   entropy[h·rows + i] = −Σ_j w[i][j]·ln w[i][j] (0·ln 0 = 0), in T (VNEG_A_LOG_A: log_f64 or
   log_f32) over blocks of 16 vectors, each block's sum added into a float64 row total; and, when
   sum is given, the layer's sum over heads for the rollout, in T: sum[i][j] = w[i][j] for the
   group's first head when `first` (the layer's first group), else += it. A part owns whole rows of
   every head of the group, so no two threads add into the same row of the sum. *lower (when
   given) becomes 0 once a row has a non-zero past its diagonal: the rollout's products are lower
   triangular while every layer is causal. The zeros past a row's last non-zero are skipped four
   vectors at a time, so causal attention costs half a dense head. `lower_given`: the caller
   vouches that no row has a weight past its diagonal (AttentionStack.lowerTriangular: a causal
   model's run, a saved file found causal), so nothing past it is read, not even to find the
   row's end. Rows round-robin over parts. */
EXPORT(head_rows) void FN(head_rows)(const T *w, int heads, int stride, int rows, int cols, double *entropy, T *sum, int first, int *lower, int lower_given, int part, int parts) {
  for (int i = part; i < rows; i += parts)
    for (int head = 0; head < heads; head++) {
      const T *row = w + (long)head * stride + (long)i * cols;
      int end = FN(row_end)(row, lower_given && i + 1 < cols ? i + 1 : cols);
      if (lower && end > i + 1) *lower = 0;
      int set = first && head == 0;
      T *acc = sum ? sum + (long)i * cols : 0;
      v128_t total = wasm_f64x2_splat(0);
      int j = 0;
      while (j + LANES <= end) {
        int stop = end - j > 16 * LANES ? j + 16 * LANES : end;
        v128_t h = VSPLAT(0);
        for (; j + LANES <= stop; j += LANES) {
          v128_t v = wasm_v128_load(row + j);
          h = VADD(h, VNEG_A_LOG_A(v));
          if (acc) wasm_v128_store(acc + j, set ? v : VADD(wasm_v128_load(acc + j), v));
        }
        total = wasm_f64x2_add(total, VWIDEN(h));
      }
      double row_total = wasm_f64x2_extract_lane(total, 0) + wasm_f64x2_extract_lane(total, 1);
      for (; j < end; j++) {
        T a = row[j];
        row_total += wasm_f64x2_extract_lane(neg_a_log_a(wasm_f64x2_splat(a)), 0);
        if (acc) acc[j] = set ? a : acc[j] + a;
      }
      entropy[(long)head * rows + i] = row_total;
      if (acc && set)
        for (; j < cols; j++) acc[j] = 0;
    }
}

/* Attention rollout (heads/rollout.ts), in T. Â = each row of 0.5·sum/heads + 0.5·I divided by
   its sum, from a layer's sum over heads (head_rows), row-major into out; rows round-robin. */
EXPORT(rollout_residual) void FN(rollout_residual)(const T *sum, int n, int heads, T *out, int part, int parts) {
  const T share = (T)0.5 / heads;
  for (int i = part; i < n; i += parts) {
    const T *s = sum + (long)i * n;
    T *o = out + (long)i * n;
    v128_t total = VSPLAT(0);
    int j = 0;
    for (; j + LANES <= n; j += LANES) {
      v128_t v = VMUL(wasm_v128_load(s + j), VSPLAT(share));
      wasm_v128_store(o + j, v);
      total = VADD(total, v);
    }
    T t = VHSUM(total);
    for (; j < n; j++) t += o[j] = s[j] * share;
    o[i] += (T)0.5;
    t += (T)0.5; /* the identity's half: t ≥ 0.5, so a fully masked row becomes the identity row */
    const T f = (T)1 / t;
    for (j = 0; j + LANES <= n; j += LANES) wasm_v128_store(o + j, VMUL(wasm_v128_load(o + j), VSPLAT(f)));
    for (; j < n; j++) o[j] *= f;
  }
}

/* C = A·B for the rollout's n x n factors: A packed by pack_rows (quad q at AP + q·n·MR) and B in
   pack's panels of NB columns. C[i][j] goes to CP + i·ldc + (j/NB)·panel + j%NB: panels (ldc NB,
   panel n·NB), the next product's B as it stands, or rows (ldc ≥ n rounded up to NB, panel NB) for
   the last. When both are lower triangular (*causal non-zero: head_rows found every layer so far
   causal; a flag in memory, as it is only known once the threads have read the layer),
   C[i][j] = Σ_{k=j..i} A[i][k]·B[k][j]: a quad of rows i..i+3 needs only the panels up to its
   diagonal and in each only k from the panel's first column to i + 3, about a sixth of a dense
   product (the diagonal panel's entries past i come out as exact zeros). Blocks of 16 rows
   round-robin over parts, which balances the triangle. */
EXPORT(rollout_product) void FN(rollout_product)(const T *AP, const T *BP, T *CP, int n, const int *causal, int ldc, int panel, int part, int parts) {
  const int lower = *causal;
  for (int i0 = 16 * part; i0 < n; i0 += 16 * parts)
    for (int i = i0; i < i0 + 16 && i < n; i += MR) {
      int rows = n - i < MR ? n - i : MR;
      int panels = lower ? (i + rows + NB - 1) / NB : (n + NB - 1) / NB;
      for (int p = 0; p < panels; p++) {
        int k0 = lower ? NB * p : 0, k1 = lower ? i + rows : n;
        FN(micro)(AP + (long)i * n + k0 * MR, BP + (long)p * n * NB + k0 * NB, CP + (long)i * ldc + (long)p * panel, ldc, k1 - k0, rows, 0, 0);
      }
    }
}

/* The comparison of two runs' heads (heads/compare.ts): per row i of a and b (rows x cols each),
   divergence[i] = ½Σ_j a·ln(a/m) + b·ln(b/m), m = (a + b)/2, in float64 (jsd_terms): the row's
   Jensen–Shannon divergence in nats. Columns past both rows' last non-zero add nothing and are
   skipped, so two causal heads cost half a dense pair; two zero rows (masked) give 0. Rows
   round-robin over parts. */
EXPORT(head_divergence) void FN(head_divergence)(const T *a, const T *b, int rows, int cols, double *divergence, int part, int parts) {
  for (int i = part; i < rows; i += parts) {
    const T *x = a + (long)i * cols, *y = b + (long)i * cols;
    int end_x = FN(row_end)(x, cols), end_y = FN(row_end)(y, cols);
    int end = end_x > end_y ? end_x : end_y;
    v128_t d = wasm_f64x2_splat(0);
    int j = 0;
    for (; j + LANES <= end; j += LANES) {
      v128_t u = wasm_v128_load(x + j), v = wasm_v128_load(y + j);
#if LANES == 4
      d = wasm_f64x2_add(d, wasm_f64x2_add(
          jsd_terms(wasm_f64x2_promote_low_f32x4(u), wasm_f64x2_promote_low_f32x4(v)),
          jsd_terms(wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(u, u, 2, 3, 0, 1)), wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(v, v, 2, 3, 0, 1)))));
#else
      d = wasm_f64x2_add(d, jsd_terms(u, v));
#endif
    }
    double total = wasm_f64x2_extract_lane(d, 0) + wasm_f64x2_extract_lane(d, 1);
    for (; j < end; j++) total += wasm_f64x2_extract_lane(jsd_terms(wasm_f64x2_splat(x[j]), wasm_f64x2_splat(y[j])), 0);
    divergence[i] = total / 2;
  }
}

#undef NB
#undef MR

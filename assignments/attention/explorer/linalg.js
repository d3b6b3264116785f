// The arithmetic of the page, and nothing else: every matrix the student sees is computed
// here from the values on screen. Matrices are arrays of rows, one row per token, exactly
// as in the lesson and in reference/transformer.py, so the two can be read side by side.
"use strict";

const LA = (() => {
  function matmul(A, B) {
    // Written as the textbook triple loop: the point is that a student can follow it.
    return A.map((row) => B[0].map((_, j) => row.reduce((acc, a, k) => acc + a * B[k][j], 0)));
  }

  function transpose(A) {
    return A[0].map((_, j) => A.map((row) => row[j]));
  }

  function dot(u, v) {
    return u.reduce((acc, a, k) => acc + a * v[k], 0);
  }

  function softmax(z) {
    // Shift by the maximum, as the reference does: exp(50) is fine, exp(800) is not,
    // and softmax(z - c) = softmax(z) for any constant c.
    const m = Math.max(...z);
    const e = z.map((x) => Math.exp(x - m)); // a masked -Infinity becomes exactly 0
    const total = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / total);
  }

  /** Scaled dot-product attention; returns every intermediate so the page can show it. */
  function attention(Q, K, V, { causal = false, scaled = true } = {}) {
    const d_k = K[0].length;
    const raw = matmul(Q, transpose(K));
    const divisor = scaled ? Math.sqrt(d_k) : 1;
    // -Infinity before the softmax, so a future key gets a weight of exactly zero
    // (a large negative number would leave a tiny, wrong, non-zero weight).
    const scores = raw.map((row, i) => row.map((s, j) => (causal && j > i ? -Infinity : s / divisor)));
    const weights = scores.map(softmax);
    return { raw, scores, weights, output: matmul(weights, V) };
  }

  function entropyBits(p) {
    // 0 · log 0 = 0 by continuity; skipping zeros also avoids NaN from 0 * -Infinity.
    return -p.reduce((acc, x) => (x > 0 ? acc + x * Math.log2(x) : acc), 0);
  }

  /** Sinusoidal encoding with the same conventions as reference.positional_encoding. */
  function positionalEncodingRow(pos, d) {
    return Array.from({ length: d }, (_, c) => {
      const omega = 1 / Math.pow(10000, (c - (c % 2)) / d);
      return c % 2 === 0 ? Math.sin(pos * omega) : Math.cos(pos * omega);
    });
  }

  function seededGaussian(seed) {
    // mulberry32 + Box–Muller: a reproducible draw, so that a reload, a screenshot
    // and a test all see the same "random" scores for the same d_k.
    let a = seed >>> 0;
    const uniform = () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    let spare = null; // Box–Muller yields two independent normals per draw; keep the second
    return () => {
      if (spare !== null) {
        const x = spare;
        spare = null;
        return x;
      }
      const r = Math.sqrt(-2 * Math.log(1 - uniform())); // 1 - u is in (0, 1]: log is finite
      const theta = 2 * Math.PI * uniform();
      spare = r * Math.sin(theta);
      return r * Math.cos(theta);
    };
  }

  return { matmul, transpose, dot, softmax, attention, entropyBits, positionalEncodingRow, seededGaussian };
})();

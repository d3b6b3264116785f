// Exhibit 1: the QKV calculator. Everything below the inputs is recomputed from them on
// every keystroke, so the page can never show a matrix that its inputs do not produce.
"use strict";

(() => {
  // The kit's own worked example: integer Q, K, V and QKᵀ, checkable by hand (see the note
  // on the page, which a test compares with these numbers).
  const PRESETS = {
    ejemplo: { X: [[1, 0], [0, 1], [1, 1]], WQ: [[1, 1], [0, 1]], WK: [[1, 0], [1, 1]], WV: [[2, 0], [0, 1]] },
    // Scores in the tens: the softmax saturates, and switching √d_k off makes it worse.
    grandes: { X: [[4, 0], [0, 4], [3, 3]], WQ: [[1, 0], [0, 1]], WK: [[2, 0], [0, 2]], WV: [[2, 0], [0, 1]] },
    // W_K = W_Q with a short t1 aligned with a long t2: the counter-example to "the
    // diagonal dominates" that the erratum on the page describes.
    simetrica: { X: [[1, 0], [2, 1], [0, 1]], WQ: [[1, 1], [0, 1]], WK: [[1, 1], [0, 1]], WV: [[2, 0], [0, 1]] },
  };
  const TOKENS = ["t1", "t2", "t3"];
  const DIMS = ["d1", "d2"];

  const root = document.getElementById("qkv");
  const causal = document.getElementById("qkv-causal");
  const scale = document.getElementById("qkv-scale");
  const status = document.getElementById("qkv-status");
  const observations = document.getElementById("qkv-observations");
  const inputsHost = document.getElementById("qkv-inputs");

  const inputs = {};
  const spec = [["X", "X (embeddings, 3×2)", 3], ["WQ", "W_Q", 2], ["WK", "W_K", 2], ["WV", "W_V", 2]];
  for (const [key, name, rows] of spec) {
    inputs[key] = UI.matrixInput(inputsHost, { id: `qkv-${key}`, name, rows, cols: 2, values: PRESETS.ejemplo[key], onChange: update });
  }

  const output = (id, caption, rowLabels, colLabels) =>
    UI.matrixOutput(document.getElementById(id), { caption, rowLabels, colLabels });
  const views = {
    Q: output("qkv-Q", "Q = X W_Q", TOKENS, DIMS),
    K: output("qkv-K", "K = X W_K", TOKENS, DIMS),
    V: output("qkv-V", "V = X W_V", TOKENS, DIMS),
    raw: output("qkv-raw", "Puntuaciones QKᵀ", TOKENS, TOKENS),
    S: output("qkv-S", () => scoreCaption(), TOKENS, TOKENS),
    A: output("qkv-A", "Pesos A = softmax(·), cada fila suma 1", TOKENS, TOKENS),
    rowsums: output("qkv-rowsums", "Suma de cada fila de A", TOKENS, ["Σ"]),
    Z: output("qkv-Z", "Salida Z = A V", TOKENS, DIMS),
  };

  function scoreCaption() {
    const parts = [scale.checked ? "QKᵀ / √d_k" : "QKᵀ (sin escalar)"];
    if (causal.checked) parts.push("con máscara causal");
    return `Puntuaciones que entran en la softmax: ${parts.join(", ")}`;
  }

  function sameMatrix(A, B) {
    return A.every((row, i) => row.every((x, j) => x === B[i][j]));
  }

  /** Facts about the current numbers, worded only when they are true of them. */
  function describe(M, r) {
    const notes = [];
    if (!sameMatrix(M.WQ, M.WK)) {
      notes.push("W_K ≠ W_Q: nada obliga a QKᵀ a ser simétrica.");
      return notes;
    }
    notes.push("W_K = W_Q: cada token usa el mismo vector como consulta y como clave, y QKᵀ es simétrica.");
    const norms = r.raw.map((row, i) => Math.sqrt(row[i]));
    const longest = norms.indexOf(Math.max(...norms));
    notes.push(`La consulta más larga es la de ${TOKENS[longest]} (‖q‖ = ${UI.fmt(norms[longest])}): ${TOKENS[longest]} da a su propia clave un peso de ${UI.fmt(r.weights[longest][longest])}, al menos tanto como a cualquier otra.`);
    r.weights.forEach((row, i) => {
      const j = row.indexOf(Math.max(...row));
      if (row[j] > row[i]) {
        notes.push(`${TOKENS[i]} da más peso a ${TOKENS[j]} (${UI.fmt(row[j])}) que a sí mismo (${UI.fmt(row[i])}): la diagonal no domina en esta fila.`);
      }
    });
    return notes;
  }

  function update() {
    const M = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, v.get()]));
    const bad = Object.entries(M).filter(([, v]) => v === null).map(([k]) => k);
    if (bad.length) {
      // Showing stale numbers next to an edited input would be a lie; show dashes instead.
      status.textContent = `Revisa ${bad.join(", ")}: hay una casilla que no es un número (usa por ejemplo 0,5 o 0.5).`;
      for (const [key, view] of Object.entries(views)) {
        const shape = { Q: [3, 2], K: [3, 2], V: [3, 2], Z: [3, 2], rowsums: [3, 1] }[key] || [3, 3];
        view.render(Array.from({ length: shape[0] }, () => Array(shape[1]).fill(NaN)));
      }
      observations.replaceChildren();
      return;
    }
    status.textContent = "";
    const Q = LA.matmul(M.X, M.WQ);
    const K = LA.matmul(M.X, M.WK);
    const V = LA.matmul(M.X, M.WV);
    const r = LA.attention(Q, K, V, { causal: causal.checked, scaled: scale.checked });
    views.Q.render(Q);
    views.K.render(K);
    views.V.render(V);
    views.raw.render(r.raw);
    views.S.render(r.scores);
    views.A.render(r.weights);
    views.rowsums.render(r.weights.map((row) => [row.reduce((a, b) => a + b, 0)]));
    views.Z.render(r.output);
    observations.replaceChildren(...describe(M, r).map((text) => UI.el("p", { text })));
  }

  root.querySelectorAll("[data-preset]").forEach((button) => {
    button.addEventListener("click", () => {
      const preset = PRESETS[button.dataset.preset];
      for (const key of Object.keys(inputs)) inputs[key].set(preset[key]);
      causal.checked = false;
      scale.checked = true;
      update();
    });
  });
  causal.addEventListener("change", update);
  scale.addEventListener("change", update);
  update();
})();

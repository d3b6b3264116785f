// Exhibit 2: why divide by √d_k. The scores are drawn, not invented: unit-variance
// vectors, a seeded generator, and the same softmax as the calculator above.
"use strict";

(() => {
  const N_KEYS = 8;
  const N_PAIRS = 2000; // enough for the measured deviation to sit within a few % of √d_k

  const select = document.getElementById("escala-dk");
  const redraw = document.getElementById("escala-redraw");
  const roundLabel = document.getElementById("escala-round");
  const out = (id) => document.getElementById(id);
  let round = 1;

  function standardDeviation(xs) {
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    return Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length);
  }

  function update() {
    const dk = Number(select.value);
    // Seeded by (d_k, round): a given d_k and draw number always show the same vectors.
    const gaussian = LA.seededGaussian(100003 * round + dk);
    const vector = () => Array.from({ length: dk }, gaussian);
    const pairs = Array.from({ length: N_PAIRS }, () => LA.dot(vector(), vector()));
    const std = standardDeviation(pairs);

    const q = vector();
    const scores = Array.from({ length: N_KEYS }, () => LA.dot(q, vector()));
    const raw = LA.softmax(scores);
    const scaled = LA.softmax(scores.map((s) => s / Math.sqrt(dk)));
    const hRaw = LA.entropyBits(raw);
    const hScaled = LA.entropyBits(scaled);

    roundLabel.textContent = String(round);
    out("escala-npairs").textContent = String(N_PAIRS);
    out("escala-std").textContent = UI.fmt(std);
    out("escala-std").dataset.value = String(std);
    out("escala-sqrt").textContent = UI.fmt(Math.sqrt(dk));
    out("escala-std-scaled").textContent = UI.fmt(std / Math.sqrt(dk));
    out("escala-std-scaled").dataset.value = String(std / Math.sqrt(dk));
    out("escala-h-raw").textContent = UI.fmt(hRaw);
    out("escala-h-scaled").textContent = UI.fmt(hScaled);

    const top = (p) => Math.max(...p);
    out("escala-summary").textContent =
      `Con d_k = ${dk}, sin escalar, la clave más pesada se lleva ${UI.fmt(top(raw))} del peso ` +
      `y la entropía es ${UI.fmt(hRaw)} bits; con escalado se lleva ${UI.fmt(top(scaled))} ` +
      `y la entropía sube a ${UI.fmt(hScaled)} bits.`;

    const host = out("escala-bars");
    UI.bars(host, scores.map((s, k) => ({ label: `clave ${k + 1} · s = ${UI.fmt(s)}`, values: [raw[k], scaled[k]] })),
      { series: ["sin escalar: ", "con escalado: "] });
    // The exact scores the page used, so a test can recompute the softmax on its own.
    host.querySelectorAll(".bar-row").forEach((row, k) => { row.dataset.score = String(scores[k]); });
  }

  select.addEventListener("change", () => { round = 1; update(); });
  redraw.addEventListener("click", () => { round += 1; update(); });
  update();
})();

// Exhibit 3: several heads on one sentence. The scores are written by hand (the page says
// so); the weights, the arcs and the sum are all computed from them.
"use strict";

(() => {
  const TOKENS = ["María", "dijo", "que", "ella", "llegaría", "tarde"];
  const n = TOKENS.length;
  const ARC_WIDTH = 12; // px of stroke for a weight of 1: thickness is exactly 12·α

  /** An n×n score matrix: `base` on the diagonal, `strong` on the listed (query, key) pairs. */
  function scores(base, strong, pairs) {
    const S = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? base : 0)));
    for (const [i, j] of pairs) {
      S[i][i] = 0;
      S[i][j] = strong;
    }
    return S;
  }

  const HEADS = [
    { name: "Cabeza 1: el vecino anterior", color: "#1b6ca8",
      scores: scores(0, 4, [[0, 0], [1, 0], [2, 1], [3, 2], [4, 3], [5, 4]]) },
    { name: "Cabeza 2: cada verbo mira a su sujeto", color: "#b5403a",
      scores: scores(2, 4, [[1, 0], [4, 3]]) },
    { name: "Cabeza 3: el pronombre mira a su antecedente", color: "#2f7d4f",
      scores: scores(2, 4, [[3, 0]]) },
  ];
  HEADS.forEach((head) => { head.weights = head.scores.map(LA.softmax); });
  const SUM = TOKENS.map((_, i) => TOKENS.map((_, j) => HEADS.reduce((acc, h) => acc + h.weights[i][j], 0)));

  const svg = document.getElementById("cabezas-arcs");
  const choice = document.getElementById("cabezas-choice");
  const NS = "http://www.w3.org/2000/svg";
  const x = (i) => 55 + i * 110;
  const TOP = 40;
  const BOTTOM = 190;
  let current = 0;
  let highlighted = null;

  // The hand-written scores travel with the page, so a test can redo the softmax itself.
  svg.dataset.scores = JSON.stringify(HEADS.map((h) => h.scores));

  const svgEl = (tag, attrs, text) => {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text) node.textContent = text;
    return node;
  };

  function drawArcs() {
    const head = HEADS[current];
    svg.querySelectorAll("path, text").forEach((node) => node.remove());
    svg.dataset.head = String(current);
    TOKENS.forEach((token, i) => {
      svg.append(svgEl("text", { x: x(i), y: TOP - 14, class: "token token-query" }, token));
      svg.append(svgEl("text", { x: x(i), y: BOTTOM + 26, class: "token token-key" }, token));
    });
    head.weights.forEach((row, i) => row.forEach((alpha, j) => {
      const mid = (TOP + BOTTOM) / 2;
      svg.append(svgEl("path", {
        d: `M ${x(i)} ${TOP} C ${x(i)} ${mid}, ${x(j)} ${mid}, ${x(j)} ${BOTTOM}`,
        stroke: head.color, fill: "none",
        "stroke-width": String(ARC_WIDTH * alpha), "stroke-opacity": String(alpha),
        "data-query": i, "data-key": j, "data-alpha": String(alpha),
        class: highlighted !== null && highlighted !== i ? "arc dimmed" : "arc",
      }));
    }));
  }

  function highlightArcs(row) {
    highlighted = row;
    svg.querySelectorAll("path.arc").forEach((p) => {
      p.classList.toggle("dimmed", row !== null && Number(p.dataset.query) !== row);
    });
  }

  const cellLabel = (what) => (i, j, v) => `${what}: consulta «${TOKENS[i]}», clave «${TOKENS[j]}»: ${v}`;
  const matrix = UI.matrixOutput(document.getElementById("cabezas-A"), {
    caption: () => `Pesos α de la ${HEADS[current].name.toLowerCase()}`,
    rowLabels: TOKENS, colLabels: TOKENS, onRow: highlightArcs,
    cellLabel: cellLabel("Peso"),
  });
  const sum = UI.matrixOutput(document.getElementById("cabezas-sum"), {
    caption: "Suma de los pesos de las 3 cabezas (cada fila suma 3)",
    rowLabels: TOKENS, colLabels: TOKENS, cellLabel: cellLabel("Suma de pesos"),
  });

  HEADS.forEach((head, h) => {
    const id = `cabezas-head-${h}`;
    const radio = UI.el("input", { type: "radio", name: "cabeza", id, value: String(h) });
    radio.checked = h === current;
    radio.addEventListener("change", () => { current = h; drawArcs(); matrix.render(head.weights); });
    choice.append(UI.el("span", { class: "toggle" }, [radio, UI.el("label", { for: id, text: head.name })]));
  });

  drawArcs();
  matrix.render(HEADS[current].weights);
  sum.render(SUM);
})();

// Exhibit 4: sinusoidal positional encoding, with the same formula (and the same column
// convention) as reference.positional_encoding.
"use strict";

(() => {
  const N_POS = 64;
  const MAX_DELTA = 100;
  const TABLE_DELTAS = [0, 1, 2, 3, 4, 5, 10, 20, 50, 100];

  const dSelect = document.getElementById("pe-d");
  const canvas = document.getElementById("pe-heatmap");
  const readout = document.getElementById("pe-readout");
  const posA = document.getElementById("pe-posA");
  const posB = document.getElementById("pe-posB");
  const start = document.getElementById("pe-start");
  const status = document.getElementById("pe-status");
  const d4Status = document.getElementById("pe-d4-status");
  const plot = document.getElementById("pe-plot");
  const ctx = canvas.getContext("2d");
  let cursor = [0, 0]; // [position, dimension] shown in the readout and outlined on the map

  /** Positions are whole, non-negative numbers; "3,0" is accepted like any decimal. */
  function readPosition(input) {
    const v = UI.parseDecimal(input.value);
    const ok = Number.isInteger(v) && v >= 0;
    input.setAttribute("aria-invalid", ok ? "false" : "true");
    return ok ? v : null;
  }

  const similarity = (pos, delta, d) => LA.dot(LA.positionalEncodingRow(pos, d), LA.positionalEncodingRow(pos + delta, d));

  function color(v) {
    // Diverging blue–white–red, so the sign of a value is visible at a glance.
    const t = Math.abs(v);
    const [r, g, b] = v < 0 ? [59, 76, 192] : [180, 4, 38];
    return `rgb(${Math.round(255 + (r - 255) * t)}, ${Math.round(255 + (g - 255) * t)}, ${Math.round(255 + (b - 255) * t)})`;
  }

  function drawHeatmap() {
    const d = Number(dSelect.value);
    const cw = canvas.width / d;
    const ch = canvas.height / N_POS;
    for (let p = 0; p < N_POS; p++) {
      LA.positionalEncodingRow(p, d).forEach((v, c) => {
        ctx.fillStyle = color(v);
        ctx.fillRect(c * cw, p * ch, Math.ceil(cw), Math.ceil(ch));
      });
    }
    cursor = [Math.min(cursor[0], N_POS - 1), Math.min(cursor[1], d - 1)];
    if (document.activeElement === canvas || canvas.dataset.hover === "1") {
      ctx.strokeStyle = "#111";
      ctx.lineWidth = 2;
      ctx.strokeRect(cursor[1] * cw + 1, cursor[0] * ch + 1, cw - 2, ch - 2);
    }
    const value = LA.positionalEncodingRow(cursor[0], d)[cursor[1]];
    readout.textContent = `posición ${cursor[0]}, dimensión ${cursor[1]}: PE = ${UI.fmt(value)}`;
    Object.assign(readout.dataset, { pos: cursor[0], dim: cursor[1], value: String(value) });
  }

  canvas.addEventListener("keydown", (event) => {
    const next = UI.arrowStep(event.key, cursor, N_POS, Number(dSelect.value));
    if (!next) return;
    event.preventDefault();
    cursor = next;
    drawHeatmap();
  });
  canvas.addEventListener("mousemove", (event) => {
    const rect = canvas.getBoundingClientRect();
    const d = Number(dSelect.value);
    cursor = [Math.min(N_POS - 1, Math.floor(((event.clientY - rect.top) / rect.height) * N_POS)),
      Math.min(d - 1, Math.floor(((event.clientX - rect.left) / rect.width) * d))];
    canvas.dataset.hover = "1";
    drawHeatmap();
  });
  canvas.addEventListener("mouseleave", () => { canvas.dataset.hover = ""; drawHeatmap(); });
  canvas.addEventListener("focus", drawHeatmap);
  canvas.addEventListener("blur", drawHeatmap);

  function drawPlot(curves, d) {
    // A plain SVG line plot: Δ on x, the dot product on y, from −d/2 to d/2.
    const [W, H, left, right, top, bottom] = [660, 260, 50, 15, 15, 35];
    const sx = (delta) => left + (delta / MAX_DELTA) * (W - left - right);
    const sy = (v) => top + ((d / 2 - v) / d) * (H - top - bottom);
    const NS = "http://www.w3.org/2000/svg";
    const add = (tag, attrs, text) => {
      const node = document.createElementNS(NS, tag);
      for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
      if (text !== undefined) node.textContent = text;
      plot.append(node);
    };
    plot.querySelectorAll(":scope > :not(title)").forEach((node) => node.remove());
    add("line", { x1: left, x2: W - right, y1: sy(0), y2: sy(0), class: "axis" });
    add("line", { x1: left, x2: left, y1: top, y2: H - bottom, class: "axis" });
    for (const v of [-d / 2, 0, d / 2]) add("text", { x: left - 6, y: sy(v) + 4, class: "tick tick-y" }, UI.fmtInput(v));
    for (const delta of [0, 25, 50, 75, 100]) add("text", { x: sx(delta), y: H - bottom + 16, class: "tick" }, String(delta));
    add("text", { x: W - right, y: H - 4, class: "tick tick-end" }, "Δ");
    curves.forEach(({ values, cls }) => {
      add("polyline", { points: values.map((v, delta) => `${sx(delta)},${sy(v)}`).join(" "), class: cls, fill: "none" });
    });
  }

  function updateSimilarity() {
    const d = Number(dSelect.value);
    const a = readPosition(posA);
    const b = readPosition(posB);
    const table = document.getElementById("pe-dots");
    if (a === null || b === null) {
      status.textContent = "Las posiciones deben ser números enteros mayores o iguales que 0.";
      return;
    }
    status.textContent = "";
    const deltas = Array.from({ length: MAX_DELTA + 1 }, (_, delta) => delta);
    const fa = deltas.map((delta) => similarity(a, delta, d));
    const fb = deltas.map((delta) => similarity(b, delta, d));
    drawPlot([{ values: fa, cls: "curve curve-a" }, { values: fb, cls: "curve curve-b" }], d);

    // The shape, stated from the numbers just drawn: highest at Δ = 0, then down with bumps.
    const up = deltas.find((delta) => delta < MAX_DELTA && fa[delta + 1] > fa[delta]);
    const shape = document.getElementById("pe-shape");
    const maxOther = Math.max(...fa.slice(1));
    shape.textContent =
      `El valor más alto es el de Δ = 0: ${UI.fmt(fa[0])} = d/2. Al alejarse baja (el mayor valor con Δ entre 1 y ${MAX_DELTA} es ${UI.fmt(maxOther)}), ` +
      (up === undefined
        ? `y en este tramo baja sin subir nunca.`
        : `pero no de forma monótona: de Δ = ${up} (${UI.fmt(fa[up])}) a Δ = ${up + 1} (${UI.fmt(fa[up + 1])}) sube. Cada término cos(Δ·ω_i) oscila a su propio ritmo, y la suma sube y baja.`);
    shape.dataset.firstRise = up === undefined ? "" : String(up);

    table.replaceChildren(UI.el("caption", { text: `PE_pos · PE_pos+Δ con d = ${d}` }));
    table.append(UI.el("thead", {}, [UI.el("tr", {}, [
      UI.el("th", { scope: "col", text: "Δ" }),
      UI.el("th", { scope: "col", text: `desde A = ${a}` }),
      UI.el("th", { scope: "col", text: `desde B = ${b}` }),
      UI.el("th", { scope: "col", text: "Σ cos(Δ·ω_i)" }),
    ])]));
    const body = UI.el("tbody");
    for (const delta of TABLE_DELTAS) {
      // The closed form, computed independently of the PE rows: one cosine per frequency.
      const closed = Array.from({ length: d / 2 }, (_, i) => Math.cos(delta / Math.pow(10000, (2 * i) / d)))
        .reduce((acc, c) => acc + c, 0);
      body.append(UI.el("tr", { "data-delta": delta }, [
        UI.el("th", { scope: "row", text: String(delta) }),
        UI.el("td", { "data-which": "A", "data-value": String(fa[delta]), text: UI.fmt(fa[delta]) }),
        UI.el("td", { "data-which": "B", "data-value": String(fb[delta]), text: UI.fmt(fb[delta]) }),
        UI.el("td", { "data-which": "cos", "data-value": String(closed), text: UI.fmt(closed) }),
      ]));
    }
    table.append(body);
  }

  function updateD4() {
    const p = readPosition(start);
    const table = document.getElementById("pe-d4");
    const dots = document.getElementById("pe-d4-dots");
    if (p === null) {
      d4Status.textContent = "La posición del primer token debe ser un número entero mayor o igual que 0.";
      return;
    }
    d4Status.textContent = "";
    const rows = [p, p + 1, p + 2].map((pos) => LA.positionalEncodingRow(pos, 4));
    table.replaceChildren(UI.el("caption", { text: "PE con d = 4 para tres posiciones contiguas" }));
    table.append(UI.el("thead", {}, [UI.el("tr", {}, [
      UI.el("th", { scope: "col", text: "Vector" }),
      ...[0, 1, 2, 3].map((c) => UI.el("th", { scope: "col", text: `dim ${c}` })),
      UI.el("th", { scope: "col", text: "Comentario" }),
    ])]));
    const body = UI.el("tbody");
    rows.forEach((row, k) => {
      const pos = p + k;
      body.append(UI.el("tr", { "data-pos": pos }, [
        UI.el("th", { scope: "row", text: `PE(${pos})` }),
        ...row.map((v, c) => UI.el("td", { "data-row": k, "data-col": c, "data-value": String(v), text: UI.fmt(v) })),
        UI.el("td", { class: "comment", text: `ángulos: ${pos}·1 = ${UI.fmt(pos)} rad en dims 0–1; ${pos}·0.01 = ${UI.fmt(pos * 0.01)} rad en dims 2–3` }),
      ]));
    });
    table.append(body);
    const d01 = LA.dot(rows[0], rows[1]);
    const d12 = LA.dot(rows[1], rows[2]);
    dots.textContent = `PE(${p})·PE(${p + 1}) = ${UI.fmt(d01)} y PE(${p + 1})·PE(${p + 2}) = ${UI.fmt(d12)}: ` +
      `los dos valen cos(1) + cos(0.01) = ${UI.fmt(Math.cos(1) + Math.cos(0.01))}, porque la separación es la misma.`;
    Object.assign(dots.dataset, { first: String(d01), second: String(d12) });
  }

  dSelect.addEventListener("change", () => { drawHeatmap(); updateSimilarity(); });
  posA.addEventListener("input", updateSimilarity);
  posB.addEventListener("input", updateSimilarity);
  start.addEventListener("input", updateD4);
  drawHeatmap();
  updateSimilarity();
  updateD4();
})();

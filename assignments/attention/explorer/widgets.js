// Shared building blocks: reading numbers the way a Spanish speaker types them, writing
// them one single way, and matrices as real <table>s that a keyboard can walk.
"use strict";

const UI = (() => {
  const DIGITS = 4;

  /** Read "0,5", "0.5", "−1" or "-1" as a number; anything else is NaN, never a guess. */
  function parseDecimal(text) {
    const s = String(text).trim().replace(/\u2212/g, "-").replace(",", ".");
    return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s) ? Number(s) : NaN;
  }

  /** One display for every computed number on the page: a point and four decimals. */
  function fmt(x, digits = DIGITS) {
    if (x === -Infinity) return "\u2212\u221e";
    if (x === Infinity) return "\u221e";
    if (Number.isNaN(x)) return "\u2014";
    // Without this, a tiny negative rounding error would print as "-0.0000".
    const rounded = Math.abs(x) < 0.5 * Math.pow(10, -digits) ? 0 : x;
    return rounded.toFixed(digits).replace("-", "\u2212");
  }

  /** Inputs (not computed values) keep the short form the student would type. */
  function fmtInput(x) {
    return String(x).replace("-", "\u2212");
  }

  function el(tag, attrs = {}, children = []) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null) continue;
      if (k === "text") node.textContent = v;
      else if (k === "class") node.className = v;
      else node.setAttribute(k, v);
    }
    for (const child of [].concat(children)) node.append(child);
    return node;
  }

  /** Where an arrow key moves a [row, col] cursor inside a rows×cols grid; null for other keys. */
  function arrowStep(key, [i, j], rows, cols) {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (!(key in moves)) return null;
    const clamp = (x, n) => Math.min(n - 1, Math.max(0, x));
    return [clamp(i + moves[key][0], rows), clamp(j + moves[key][1], cols)];
  }

  /**
   * An editable matrix: one <input> per cell, each with its own <label> for screen readers.
   * get() returns the matrix, or null while any cell does not hold a number.
   */
  function matrixInput(host, { id, name, rows, cols, values, onChange }) {
    const table = el("table", { class: "matrix matrix-input", id });
    table.append(el("caption", { text: name }));
    const inputs = [];
    for (let i = 0; i < rows; i++) {
      const tr = el("tr");
      inputs.push([]);
      for (let j = 0; j < cols; j++) {
        const inputId = `${id}-r${i}c${j}`;
        const input = el("input", {
          id: inputId, type: "text", inputmode: "decimal", autocomplete: "off",
          spellcheck: "false", size: "4", "data-row": i, "data-col": j,
        });
        const label = el("label", { for: inputId, class: "visually-hidden", text: `${name}, fila ${i + 1}, columna ${j + 1}` });
        input.addEventListener("input", () => {
          const ok = !Number.isNaN(parseDecimal(input.value));
          input.setAttribute("aria-invalid", ok ? "false" : "true");
          onChange();
        });
        inputs[i].push(input);
        tr.append(el("td", {}, [label, input]));
      }
      table.append(tr);
    }
    host.append(table);
    const set = (M) => {
      M.forEach((row, i) => row.forEach((x, j) => {
        inputs[i][j].value = fmtInput(x);
        inputs[i][j].setAttribute("aria-invalid", "false");
      }));
    };
    const get = () => {
      const M = inputs.map((row) => row.map((input) => parseDecimal(input.value)));
      return M.some((row) => row.some(Number.isNaN)) ? null : M;
    };
    set(values);
    return { set, get, table };
  }

  /**
   * A computed matrix as a table. Cells are focusable with a roving tabindex: Tab enters
   * the matrix once, the arrow keys walk it, so a 6×6 matrix costs one tab stop, not 36.
   * The row under the mouse or holding the focus is highlighted, and onRow is told.
   */
  function matrixOutput(table, { caption, rowLabels, colLabels, onRow = () => {}, cellLabel }) {
    let values = null;
    let active = [0, 0];
    let hovered = null;
    let focused = null;
    let rendering = false;

    const highlight = () => {
      const row = hovered !== null ? hovered : focused;
      table.querySelectorAll("tbody tr").forEach((tr, i) => tr.classList.toggle("row-highlight", i === row));
      table.dataset.highlightRow = row === null ? "" : String(row);
      onRow(row);
    };

    const cell = (i, j) => table.querySelector(`td[data-row="${i}"][data-col="${j}"]`);

    table.addEventListener("keydown", (event) => {
      const next = values && arrowStep(event.key, active, values.length, values[0].length);
      if (!next) return;
      event.preventDefault();
      cell(...next).focus();
    });
    table.addEventListener("focusin", (event) => {
      const td = event.target.closest("td");
      if (!td) return;
      active = [Number(td.dataset.row), Number(td.dataset.col)];
      table.querySelectorAll("td").forEach((c) => c.setAttribute("tabindex", c === td ? "0" : "-1"));
      focused = active[0];
      highlight();
    });
    table.addEventListener("focusout", (event) => {
      if (!rendering && !table.contains(event.relatedTarget)) {
        focused = null;
        highlight();
      }
    });
    table.addEventListener("mouseover", (event) => {
      const tr = event.target.closest("tbody tr");
      hovered = tr ? Number(tr.dataset.row) : null;
      highlight();
    });
    table.addEventListener("mouseleave", () => {
      hovered = null;
      highlight();
    });

    function render(M) {
      values = M;
      active = [Math.min(active[0], M.length - 1), Math.min(active[1], M[0].length - 1)];
      const hadFocus = table.contains(document.activeElement);
      rendering = true;
      const resolve = (x) => (typeof x === "function" ? x() : x);
      const title = resolve(caption);
      const rl = resolve(rowLabels) || M.map((_, i) => String(i + 1));
      const cl = resolve(colLabels) || M[0].map((_, j) => String(j + 1));
      // A screen reader hears which cell it is on, not just a bare number.
      const label = cellLabel || ((i, j, v) => `${title}, fila ${rl[i]}, columna ${cl[j]}: ${v}`);
      table.replaceChildren();
      table.classList.add("matrix", "matrix-output");
      table.append(el("caption", { text: title }));
      const head = el("tr", {}, [el("td", { class: "corner" })]);
      cl.forEach((c) => head.append(el("th", { scope: "col", text: c })));
      table.append(el("thead", {}, [head]));
      const body = el("tbody");
      M.forEach((row, i) => {
        const tr = el("tr", { "data-row": i }, [el("th", { scope: "row", text: rl[i] })]);
        row.forEach((x, j) => {
          const isActive = i === active[0] && j === active[1];
          tr.append(el("td", {
            "data-row": i, "data-col": j, "data-value": String(x), tabindex: isActive ? "0" : "-1",
            "aria-label": label(i, j, fmt(x)),
            text: fmt(x),
          }));
        });
        body.append(tr);
      });
      table.append(body);
      // Re-rendering must not steal the focus (or the highlight) the student is using.
      if (hadFocus) cell(...active).focus();
      rendering = false;
      highlight();
    }

    return { render };
  }

  /** Horizontal bars with their numbers: a distribution the eye can compare at once. */
  function bars(host, items, { max = 1, series = [""] } = {}) {
    host.replaceChildren();
    for (const item of items) {
      const row = el("div", { class: "bar-row" }, [el("span", { class: "bar-label", text: item.label })]);
      const stack = el("div", { class: "bar-stack" });
      item.values.forEach((v, s) => {
        const track = el("div", { class: `bar-track series-${s}` });
        track.append(el("div", { class: "bar-fill", style: `width:${(100 * Math.max(0, v)) / max}%` }));
        const value = el("span", { class: "bar-value", "data-value": String(v), text: `${series[s]}${fmt(v)}` });
        stack.append(el("div", { class: "bar-line" }, [track, value]));
      });
      row.append(stack);
      host.append(row);
    }
  }

  return { parseDecimal, fmt, fmtInput, el, arrowStep, matrixInput, matrixOutput, bars };
})();

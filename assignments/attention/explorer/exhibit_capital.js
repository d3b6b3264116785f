// Exhibit 5: "La capital de ___ es …", one forward pass from embeddings to the loss.
// The toy is built so that its claims hold exactly, not approximately:
//  - only dimension 0 carries the country, and the rows of W_Q and W_K that read it are
//    zero, so the attention row of "es" cannot depend on the country;
//  - W_V copies dimension 0, so the country travels in the value;
//  - u_Roma mirrors u_París in dimension 0, so identity 0 gives equal logits, and
//    identity −x gives Roma exactly the probability París has at +x.
"use strict";

(() => {
  const VOCAB = ["París", "Roma", "la", "capital", "de", "es", "Francia", "Italia"];
  const W_Q = [[0, 0, 0], [0, 0, 0], [0, 3, 0]];
  const W_K = [[0, 0, 0], [0, 1, 0], [0, 0, 0]];
  const W_V = [[1, 0, 0], [0, 0, 0], [0, 0, 0]];
  // One output vector per word; the six words the toy knows nothing about share 0.
  const U = [[4, 0, 1], [-4, 0, 1], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]];
  const ES = 4; // index of "es", the token whose next word we predict

  const range = document.getElementById("capital-id-range");
  const text = document.getElementById("capital-id");
  const status = document.getElementById("capital-status");
  const $ = (id) => document.getElementById(id);

  const countryName = (identity) => (identity === 1 ? "Francia" : identity === -1 ? "Italia" : `país(${UI.fmtInput(identity)})`);
  const tokens = (identity) => ["La", "capital", "de", countryName(identity), "es"];
  let identity = 1;

  const view = (id, caption, rowLabels, colLabels) => UI.matrixOutput($(id), { caption, rowLabels, colLabels });
  const DIMS = ["dim 0", "dim 1", "dim 2"];
  const toks = () => tokens(identity);
  const views = {
    X: view("capital-X", "X: un embedding por token", toks, DIMS),
    q: view("capital-q", "Consulta de «es»: q = x_es W_Q", ["q_es"], DIMS),
    K: view("capital-K", "Claves K = X W_K", toks, DIMS),
    V: view("capital-V", "Valores V = X W_V", toks, DIMS),
    scores: view("capital-scores", "Puntuaciones de «es»", ["es"], toks),
    attn: view("capital-attn", "Fila de atención de «es»", ["es"], toks),
    z: view("capital-z", "z = Σ α_j v_j", ["z"], DIMS),
    h: view("capital-h", "h = x_es + z", ["h"], DIMS),
    logits: view("capital-logits", "Logits ℓ_w = h · u_w", ["ℓ"], VOCAB),
    probs: view("capital-probs", "Probabilidades p_w = softmax(ℓ)_w", ["p"], VOCAB),
  };

  /** The forward pass, step by step, exactly as the eight steps on the page. */
  function forward(id) {
    const X = [[0, 0, 0], [0, 0.5, 0], [0, 0, 0], [id, 1, 0], [0, 0, 1]]; // 1. embeddings
    const K = LA.matmul(X, W_K); // 2. projections
    const V = LA.matmul(X, W_V);
    const q = LA.matmul([X[ES]], W_Q)[0];
    const scores = K.map((k) => LA.dot(q, k) / Math.sqrt(3)); // 3. scores
    const attn = LA.softmax(scores); // 4. softmax
    const z = LA.matmul([attn], V)[0]; // 5. mix: the content that travels
    const h = X[ES].map((x, c) => x + z[c]); // 6. residual
    const logits = U.map((u) => LA.dot(h, u)); // 7. logits
    const probs = LA.softmax(logits); // 8. distribution
    return { X, K, V, q, scores, attn, z, h, logits, probs };
  }

  function render() {
    const r = forward(identity);
    views.X.render(r.X);
    views.q.render([r.q]);
    views.K.render(r.K);
    views.V.render(r.V);
    views.scores.render([r.scores]);
    views.attn.render([r.attn]);
    views.z.render([r.z]);
    views.h.render([r.h]);
    views.logits.render([r.logits]);
    views.probs.render([r.probs]);
    UI.bars($("capital-attn-bars"), toks().map((t, j) => ({ label: t, values: [r.attn[j]] })));
    UI.bars($("capital-prob-bars"), VOCAB.map((w, k) => ({ label: w, values: [r.probs[k]] })));

    const best = Math.max(...r.probs);
    const winners = VOCAB.filter((_, k) => r.probs[k] === best);
    // A tie is reported as a tie: picking the first word would state a preference the
    // model does not have.
    $("capital-pred").textContent = winners.length > 1 ? `empate: ${winners.join(" = ")}` : winners[0];
    $("capital-pred").dataset.words = JSON.stringify(winners);
    $("capital-p").textContent = UI.fmt(best);
    $("capital-p").dataset.value = String(best);
    $("capital-loss").textContent = UI.fmt(-Math.log(best));
    $("capital-loss").dataset.value = String(-Math.log(best));
    $("capital-sentence").textContent = `La capital de ${countryName(identity)} es … ${winners.join(" / ")}`;
  }

  function setIdentity(value, source) {
    identity = value;
    if (source !== range) range.value = String(value);
    if (source !== text) text.value = UI.fmtInput(value);
    render();
  }

  range.addEventListener("input", () => setIdentity(Number(range.value), range));
  text.addEventListener("input", () => {
    const v = UI.parseDecimal(text.value);
    const ok = !Number.isNaN(v) && v >= -1 && v <= 1;
    text.setAttribute("aria-invalid", ok ? "false" : "true");
    status.textContent = ok ? "" : "La identidad debe ser un número entre −1 y 1 (por ejemplo −0,5).";
    if (ok) setIdentity(v, text);
  });
  document.querySelectorAll("#capital [data-identity]").forEach((button) => {
    button.addEventListener("click", () => {
      text.setAttribute("aria-invalid", "false");
      status.textContent = "";
      setIdentity(Number(button.dataset.identity), button);
    });
  });
  render();
})();

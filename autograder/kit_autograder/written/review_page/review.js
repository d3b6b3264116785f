// The review page: one written question at a time across the class. Every change is sent to
// the kit's local server, which writes written_scores.csv at once; nothing is kept only here.
"use strict";

const token = document.querySelector('meta[name="review-token"]').content;
const $ = (id) => document.getElementById(id);
const view = { state: null, question: 0, student: 0, answers: {}, pendingComment: null };
let saving = Promise.resolve();

function api(path, body) {
  const options = { headers: { "X-Review-Token": token } };
  if (body !== undefined) {
    options.method = "POST";
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  return fetch(path, options).then(async (response) => {
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(data.error || `error ${response.status}`);
    return data;
  });
}

function number(value) {
  return String(Math.round(value * 100) / 100).replace(".", ",");
}

// «1 punto», «0,5 puntos», «2 puntos»: what a header, a level and a save say.
function points(value) {
  return `${number(value)} ${value === 1 ? "punto" : "puntos"}`;
}

function question() { return view.state.questions[view.question]; }
function students() { return view.state.students; }
function current() { return students()[view.student]; }
function marksOf(file) { return view.state.marks[file] || (view.state.marks[file] = {}); }
function pointsOf(file, name) {
  const mark = marksOf(file)[name];
  return mark && mark.points !== null && mark.points !== undefined ? mark.points : null;
}
function gradedIn(name) { return students().filter((s) => pointsOf(s.file, name) !== null).length; }

function say(text, isError) {
  const status = $("status");
  status.textContent = text;
  status.classList.toggle("error", Boolean(isError));
}

function who(student, position) {
  if ($("hide-names").checked) return `Entrega ${position}`;
  if (!student.name && !student.id) return `Entrega ${position}: ${student.file}`;
  return [student.name, student.id ? `(${student.id})` : ""].filter(Boolean).join(" ");
}

function renderProgress() {
  const total = students().length * view.state.questions.length;
  const graded = view.state.questions.reduce((sum, q) => sum + gradedIn(q.name), 0);
  $("overall").textContent = `Corregidas: ${graded} de ${total} respuestas`;
  const list = $("questions");
  list.replaceChildren(...view.state.questions.map((q, index) => {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = `Pregunta ${q.number} · ${gradedIn(q.name)} de ${students().length}`;
    if (index === view.question) button.setAttribute("aria-current", "true");
    button.addEventListener("click", () => openQuestion(index, 0));
    item.append(button);
    return item;
  }));
  const q = question();
  $("position").textContent = `Respuesta ${view.student + 1} de ${students().length} · ` +
    `corregidas ${gradedIn(q.name)} de ${students().length} en esta pregunta`;
  const blank = blankUngraded();
  const button = $("zero-blank");
  button.hidden = blank.length === 0;
  button.textContent = blank.length === 1 ? "Dar 0 a la respuesta vacía sin corregir"
    : `Dar 0 a las ${blank.length} respuestas vacías sin corregir`;
}

function blankUngraded() {
  // Only once this question's answers are loaded: an answer not seen is never graded blind.
  const shown = view.answers[question().name];
  if (!shown) return [];
  return students().filter((s) => shown[s.file] && shown[s.file].state !== "answered" &&
                                  pointsOf(s.file, question().name) === null);
}

function zeroBlank() {
  flushComment();
  const name = question().name;
  for (const student of blankUngraded()) {
    const comment = (marksOf(student.file)[name] || {}).comment || "";
    marksOf(student.file)[name] = { points: 0, comment };
    send(student.file, name, 0, comment);
  }
  saving.then(() => { renderLevels(); renderProgress(); });
}

function renderLevels() {
  const q = question();
  const chosen = pointsOf(current().file, q.name);
  const container = $("levels");
  const options = q.levels.map((level) => ({ value: String(level.points), level }));
  options.push({ value: "", level: null });
  container.replaceChildren(...options.map(({ value, level }) => {
    const label = document.createElement("label");
    const input = document.createElement("input");
    input.type = "radio";
    input.name = "level";
    input.value = value;
    input.checked = level ? chosen === level.points : chosen === null;
    input.addEventListener("change", () => saveMark(level ? level.points : null));
    const shown = document.createElement("span");
    shown.className = "points";
    const text = document.createElement("span");
    const key = document.createElement("kbd");
    if (level) {
      shown.textContent = points(level.points);
      text.textContent = level.description;
      key.textContent = level.key;
      key.title = `tecla ${level.key}: ${points(level.points)}`;
    } else {
      shown.textContent = "—";
      text.textContent = chosen === null || q.levels.some((l) => l.points === chosen)
        ? "Sin corregir" : `Otra puntuación: ${number(chosen)} (de la hoja de cálculo)`;
      key.textContent = "";
      key.hidden = true;
    }
    label.append(input, shown, text, key);
    return label;
  }));
}

function renderAnswer() {
  const student = current();
  const answer = (view.answers[question().name] || {})[student.file];
  const title = $("student-title");
  title.textContent = who(student, view.student + 1);
  if (student.late) {
    const late = document.createElement("span");
    late.className = "late";
    late.textContent = "entregada tarde";
    title.append(late);
  }
  $("answer-title").textContent = `Respuesta de ${who(student, view.student + 1)}`;
  const body = $("answer-body");
  if (!answer) {
    body.innerHTML = "<p class=\"empty\">Cargando…</p>";
  } else if (answer.state === "answered") {
    // The server rendered the student's Markdown with HTML turned off: this is escaped text.
    body.innerHTML = answer.html +
      (answer.truncated ? "<p class=\"problem\">(Respuesta recortada: es muy larga.)</p>" : "");
    for (const link of body.querySelectorAll("a")) {
      if (!link.textContent.trim()) link.textContent = link.getAttribute("href");
      link.target = "_blank";
      link.rel = "noopener noreferrer";
    }
  } else if (answer.state === "empty") {
    body.innerHTML = "<p class=\"empty\">Sin respuesta: la celda tiene solo el texto de ejemplo o está vacía.</p>";
  } else {
    body.innerHTML = "<p class=\"problem\">No se ha podido leer la respuesta: " +
      (answer.problem || "no está en el cuaderno") + ".</p>";
  }
  const mark = marksOf(student.file)[question().name];
  $("comment").value = mark && mark.comment ? mark.comment : "";
}

function render() {
  const q = question();
  $("question-title").textContent = `Pregunta ${q.number} (${points(q.points)})`;
  $("question-prompt").textContent = q.prompt;
  renderAnswer();
  renderLevels();
  renderProgress();
}

async function openQuestion(index, student) {
  flushComment();
  view.question = index;
  view.student = student;
  const name = question().name;
  if (!view.answers[name]) {
    render();
    try {
      view.answers[name] = await api(`/api/answers?question=${encodeURIComponent(name)}`);
    } catch (error) {
      say(`No se han podido cargar las respuestas: ${error.message}`, true);
      return;
    }
  }
  render();
}

function move(step) {
  flushComment();
  const count = students().length;
  const next = view.student + step;
  if (next >= 0 && next < count) {
    view.student = next;
    render();
    $("respuesta").focus();
  } else if (next >= count && view.question + 1 < view.state.questions.length) {
    openQuestion(view.question + 1, 0).then(() => $("respuesta").focus());
    say(`Pregunta ${view.question + 2}.`);
  } else if (next < 0 && view.question > 0) {
    openQuestion(view.question - 1, count - 1).then(() => $("respuesta").focus());
  } else {
    say(next < 0 ? "Es la primera respuesta." : "Es la última respuesta.");
  }
}

function nextUngraded() {
  flushComment();
  const count = students().length;
  const questions = view.state.questions;
  for (let offset = 1; offset <= count * questions.length; offset++) {
    const flat = view.question * count + view.student + offset;
    const q = Math.floor(flat / count) % questions.length;
    const s = flat % count;
    if (pointsOf(students()[s].file, questions[q].name) === null) {
      if (q === view.question) {
        view.student = s;
        render();
        $("respuesta").focus();
      } else {
        openQuestion(q, s).then(() => $("respuesta").focus());
      }
      return;
    }
  }
  say("Todas las respuestas están corregidas.");
}

function send(file, name, given, comment) {
  saving = saving.then(() => api("/api/score", { file, question: name, points: given, comment })
    .then((data) => {
      view.state.marks[file] = data.marks;
      const label = view.state.questions.find((q) => q.name === name).number;
      const shown = given === null ? "sin corregir" : points(given);
      say(`Guardado: pregunta ${label}, ${shown}.`);
      renderProgress();
    })
    .catch((error) => say(`No se ha podido guardar: ${error.message}`, true)));
  return saving;
}

function saveMark(given) {
  const student = current();
  const name = question().name;
  if (view.pendingComment) {  // the comment being typed goes with the level
    clearTimeout(view.pendingComment.timer);
    view.pendingComment = null;
  }
  const comment = $("comment").value;
  marksOf(student.file)[name] = { points: given, comment };
  send(student.file, name, given, comment);
}

function scheduleComment() {
  const student = current();
  const name = question().name;
  clearTimeout(view.pendingComment && view.pendingComment.timer);
  const pending = { file: student.file, name, comment: $("comment").value };
  pending.timer = setTimeout(flushComment, 600);
  view.pendingComment = pending;
}

function flushComment() {
  const pending = view.pendingComment;
  if (!pending) return;
  clearTimeout(pending.timer);
  view.pendingComment = null;
  const given = pointsOf(pending.file, pending.name);
  marksOf(pending.file)[pending.name] = { points: given, comment: pending.comment };
  send(pending.file, pending.name, given, pending.comment);
}

function onKey(event) {
  const target = event.target;
  const inComment = target.id === "comment";
  if (inComment) {
    if (event.key === "Escape") {
      flushComment();
      $("respuesta").focus();
      event.preventDefault();
    } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      move(1);
      event.preventDefault();
    }
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const onControl = target.closest && target.closest("button, input[type=checkbox]");
  const level = question().levels.find((l) => l.key === event.key);
  if (level) {
    const input = [...document.querySelectorAll('input[name="level"]')]
      .find((i) => i.value === String(level.points));
    input.checked = true;
    saveMark(level.points);
    event.preventDefault();
  } else if (event.key === "s" || (event.key === "Enter" && !onControl)) {
    move(1);
    event.preventDefault();
  } else if (event.key === "a") {
    move(-1);
    event.preventDefault();
  } else if (event.key === "n") {
    nextUngraded();
    event.preventDefault();
  } else if (event.key === "c") {
    $("comment").focus();
    event.preventDefault();
  }
}

async function start() {
  try {
    view.state = await api("/api/state");
  } catch (error) {
    $("overall").textContent = `No se ha podido abrir la corrección: ${error.message}`;
    return;
  }
  $("grading").addEventListener("submit", (event) => { event.preventDefault(); move(1); });
  $("previous").addEventListener("click", () => move(-1));
  $("next-ungraded").addEventListener("click", nextUngraded);
  $("zero-blank").addEventListener("click", zeroBlank);
  $("comment").addEventListener("input", scheduleComment);
  $("comment").addEventListener("blur", flushComment);
  $("hide-names").addEventListener("change", renderAnswer);
  document.addEventListener("keydown", onKey);
  window.addEventListener("beforeunload", flushComment);
  await openQuestion(0, 0);
}

start();

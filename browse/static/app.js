// The run browser: the per-ply table and charts from /api/report, a board
// viewer over /api/position, and live progress from /api/progress.
// Routes live in the URL's fragment, so every position has an address
// and the browser's back and forward buttons walk the history:
//   #/                 the start position
//   #/moves/f5d6c3     the position after these moves
//   #/pos/<key>        a position given by its 33-character key
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const $ = (sel) => document.querySelector(sel);

function el(tag, attrs, ...children) {
  const ns = ["svg", "rect", "circle", "line", "polyline", "text", "g", "a", "title"].includes(tag) && attrs && attrs.svg;
  const e = ns ? document.createElementNS(SVG, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "svg" || v === undefined || v === null) continue;
    if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}
const svg = (tag, attrs, ...children) => el(tag, Object.assign({ svg: true }, attrs), ...children);

function fmt(n) {
  return typeof n === "number" ? n.toLocaleString("en-US") : "–";
}

function showError(msg) {
  const e = $("#error");
  e.textContent = msg || "";
  e.hidden = !msg;
}

async function getJSON(url) {
  const resp = await fetch(url, { cache: "no-store" });
  let body = null;
  try { body = await resp.json(); } catch (e) { /* not JSON: the status says enough */ }
  return { status: resp.status, body };
}

// ---- the report: summary, table, charts, cost

let report = null;

async function loadReport() {
  const { status, body } = await getJSON("api/report");
  if (status !== 200) {
    showError("report: " + ((body && body.error) || "HTTP " + status));
    return;
  }
  showError("");
  report = body;
  renderReport(body);
}

// usd formats a cost in US dollars to the millionth.
function usd(v) {
  return typeof v === "number" ? "$" + v.toFixed(6) : "–";
}

const countCols = ["positions", "terminal", "edges", "black_wins", "white_wins", "draws", "unknown", "blobs", "merges", "blob_reads", "tasks", "entity_reads"];
// What the costliest handling of one of a ply's messages cost: the "all"
// row gives the most over the plies, not a sum.
const maxCols = ["max_task_transactions", "max_task_entities", "max_task_seconds"];

function maxText(c, v) {
  return c === "max_task_seconds" ? (v || 0).toFixed(3) : fmt(v || 0);
}

function plyRow(ply, p, tx, cost, cls) {
  const tr = el("tr", { "data-ply": ply, class: cls }, el("td", { class: cls ? "text" : null, text: ply }));
  for (const c of countCols) tr.append(el("td", { class: c, text: p ? fmt(p[c] || 0) : "–" }));
  for (const c of maxCols) tr.append(el("td", { class: c, text: p ? maxText(c, p[c]) : "–" }));
  tr.append(el("td", { class: "transactions", text: fmt(tx) }), el("td", { class: "cost", text: usd(cost) }));
  return tr;
}

function renderReport(r) {
  $("#title").textContent = "reversi run " + (r.run || "") + ": " + r.board + "x" + r.board;
  let s = "target ply " + r.target_ply + ", " + (r.complete ? "complete" : "in progress") + ", root: " + r.root;
  if (r.score) s += ", perfect play " + r.score.black + "-" + r.score.white + " (black-white)";
  if (r.start) s += ", from the start position " + r.start;
  if (r.frontier) s += ", solve mode " + r.solve_mode + ": ply " + r.target_ply + " " + r.frontier.solved + " solved, " + r.frontier.bounded + " bounded, " + r.frontier.skipped + " skipped";
  $("#summary").textContent = s;
  document.body.dataset.complete = r.complete ? "true" : "false";

  // Transactions and cost per ply come from the cost estimate, which
  // also lists plies still being worked on: they get rows of their own.
  // Statistics recorded before plies were counted have none: "–".
  const cost = r.cost || {};
  const priced = (cost.plies || []).length > 0;
  const plyCost = new Map((cost.plies || []).map((c) => [c.ply, c]));
  const tbody = $("#ply-table tbody");
  tbody.replaceChildren();
  const total = {};
  const counted = new Set();
  for (const p of r.plies) {
    for (const c of countCols) total[c] = (total[c] || 0) + (p[c] || 0);
    for (const c of maxCols) total[c] = Math.max(total[c] || 0, p[c] || 0);
    const c = plyCost.get(p.ply) || (priced ? { transactions: 0, usd: 0 } : {});
    counted.add(p.ply);
    tbody.append(plyRow(p.ply, p, c.transactions, c.usd));
  }
  for (const c of cost.plies || []) {
    if (!counted.has(c.ply)) tbody.append(plyRow(c.ply, null, c.transactions, c.usd, "in-progress"));
  }
  const foot = [];
  if (priced) {
    const none = el("tr", { class: "no-ply" }, el("td", { class: "text", text: "no ply" }));
    for (const c of countCols.concat(maxCols)) none.append(el("td", { class: c }));
    none.append(el("td", { class: "transactions", text: fmt(cost.no_ply.transactions) }), el("td", { class: "cost", text: usd(cost.no_ply.usd) }));
    foot.push(none);
  }
  const all = el("tr", { class: "all" }, el("td", { class: "text", text: "all" }));
  for (const c of countCols) all.append(el("td", { class: c, text: fmt(total[c] || 0) }));
  for (const c of maxCols) all.append(el("td", { class: c, text: maxText(c, total[c]) }));
  all.append(el("td", { class: "transactions", text: fmt(r.storage_transactions) }), el("td", { class: "cost", text: r.cost ? usd(cost.transactions_usd) : "–" }));
  foot.push(all);
  $("#ply-table tfoot").replaceChildren(...foot);

  const plies = r.plies.map((p) => p.ply);
  for (const c of cost.plies || []) if (!counted.has(c.ply)) plies.push(c.ply);
  const perPly = (f) => plies.map((ply) => f(plyCost.get(ply) || {}));
  const row = new Map(r.plies.map((p) => [p.ply, p]));
  const counts = (f) => plies.map((ply) => (row.has(ply) ? f(row.get(ply)) : 0));
  $("#charts").replaceChildren(
    logChart("positions and edges per ply", plies, [
      { name: "positions", values: counts((p) => p.positions) },
      { name: "edges", values: counts((p) => p.edges) },
    ], fmt),
    logChart("storage transactions per ply", plies, [
      { name: "transactions", values: perPly((c) => c.transactions || 0) },
      { name: "blob reads", values: counts((p) => p.blob_reads || 0) },
      { name: "merges", values: counts((p) => p.merges || 0) },
    ], fmt),
    logChart("cost per ply, USD", plies, [
      { name: "cost", values: perPly((c) => c.usd || 0) },
    ], usd),
  );
  renderCost(r);
  renderKinds(r);
  $("#plies").dataset.loaded = r.plies.length;
}

// The handlings of each ply by kind of message (by_kind), in ply order,
// kinds by name.
const kindCols = ["handlings", "transactions", "entity_reads", "max_transactions", "max_entities"];

function renderKinds(r) {
  const rows = [];
  for (const p of r.plies) {
    for (const [kind, k] of Object.entries(p.by_kind || {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const tr = el("tr", { "data-ply": p.ply }, el("td", { text: p.ply }), el("td", { class: "text", text: kind }));
      for (const c of kindCols) tr.append(el("td", { class: c, text: fmt(k[c] || 0) }));
      rows.push(tr);
    }
  }
  $("#kind-table tbody").replaceChildren(...rows);
}

function renderCost(r) {
  const rows = [["storage transactions", fmt(r.storage_transactions)]];
  if (r.transactions_per_edge) rows.push(["per edge", r.transactions_per_edge.toFixed(5)]);
  for (const [c, n] of Object.entries(r.transactions_by_category || {}).sort()) rows.push(["  " + c, fmt(n)]);
  const cost = r.cost;
  if (cost) {
    for (const l of cost.lines || []) {
      rows.push([l.service + " " + l.class + " (" + fmt(l.transactions) + " at $" + l.price_per_10k + " per 10,000)", "$" + l.usd.toFixed(6)]);
    }
    rows.push(["transactions cost", "$" + cost.transactions_usd.toFixed(6)]);
    rows.push(["blob data kept", fmt(cost.stored_bytes) + " bytes, $" + cost.storage_usd_per_month.toFixed(6) + " a month"]);
    rows.push(["prices", cost.prices.source]);
  }
  $("#cost-table tbody").replaceChildren(...rows.map(([k, v]) => el("tr", {}, el("th", { class: "text", text: k }), el("td", { class: "text", text: v }))));
}

// logChart draws series of positive values per ply on a log scale
// spanning whole powers of ten; zeros are left out of the lines. label
// formats a value for the tooltips.
function logChart(title, xs, series, label) {
  const W = 460, H = 256, L = 58, R = 12, T = 44, B = 40;
  let lo = Infinity, hi = -Infinity;
  for (const s of series) for (const v of s.values) if (v > 0) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (lo === Infinity) { lo = 1; hi = 1; }
  const bottom = Math.min(0, Math.floor(Math.log10(lo)));
  const top = Math.max(bottom + 1, Math.ceil(Math.log10(hi)));
  const xmax = Math.max(1, xs.length - 1);
  const x = (i) => L + (W - L - R) * i / xmax;
  const y = (v) => T + (H - T - B) * (1 - (Math.log10(v) - bottom) / (top - bottom));
  const tick = (d) => d < 0 ? "1e" + d : d < 3 ? String(Math.pow(10, d)) : d < 6 ? Math.pow(10, d - 3) + "k" : d < 9 ? Math.pow(10, d - 6) + "M" : "1e" + d;
  const g = svg("svg", { class: "chart", width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": title });
  g.append(svg("text", { x: L, y: 16, text: title + " (log scale)" }));
  for (let d = bottom; d <= top; d++) {
    const yy = y(Math.pow(10, d));
    g.append(svg("line", { class: "grid", x1: L, x2: W - R, y1: yy, y2: yy }));
    g.append(svg("text", { x: L - 6, y: yy + 4, "text-anchor": "end", text: tick(d) }));
  }
  g.append(svg("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B }));
  xs.forEach((p, i) => g.append(svg("text", { x: x(i), y: H - B + 14, "text-anchor": "middle", text: p })));
  g.append(svg("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", text: "ply" }));
  series.forEach((s, k) => {
    const pts = [];
    const grp = svg("g", { class: "s" + k, "data-series": s.name });
    s.values.forEach((v, i) => {
      if (v <= 0) return;
      pts.push(x(i) + "," + y(v));
      grp.append(svg("circle", { cx: x(i), cy: y(v), r: 3, "data-ply": xs[i], "data-value": v }, svg("title", { text: s.name + " at ply " + xs[i] + ": " + label(v) })));
    });
    grp.prepend(svg("polyline", { points: pts.join(" ") }));
    g.append(grp);
    g.append(svg("text", { class: "s" + k, x: L + 8 + k * 110, y: T - 12, text: "● " + s.name }));
  });
  return g;
}

// ---- the board viewer

let shown = 0; // the latest position asked for; older answers are dropped

function route() {
  const h = decodeURIComponent(location.hash.replace(/^#/, ""));
  let m = h.match(/^\/pos\/([^/?]*)$/);
  if (m) return { kind: "key", value: m[1] };
  m = h.match(/^\/moves\/([^/?]*)$/);
  if (m) return { kind: "moves", value: m[1] };
  return { kind: "moves", value: "" };
}

// tokens splits a move list such as "f5d6,c3" into two-letter moves.
function tokens(moves) {
  return (moves.replace(/[\s,]/g, "").match(/../g) || []).map((t) => t.toLowerCase());
}

function movesHref(list) {
  return "#/moves/" + list.join("");
}

async function showPosition() {
  const rt = route();
  const n = ++shown;
  const q = rt.kind === "key" ? "key=" + encodeURIComponent(rt.value) : "moves=" + encodeURIComponent(rt.value);
  const { status, body } = await getJSON("api/position?" + q);
  if (n !== shown) return;
  const err = $("#position-error");
  if (!body || !body.rows) {
    err.textContent = (body && body.error) || "HTTP " + status;
    err.hidden = false;
    $("#viewer").dataset.key = "";
    return;
  }
  err.textContent = body.error ? "not in this run: " + body.error : "";
  err.hidden = !body.error;
  renderPath(rt);
  renderPosition(rt, body);
  $("#viewer").dataset.key = body.key;
}

function renderPath(rt) {
  const nav = $("#path");
  if (rt.kind === "key") {
    nav.replaceChildren(el("a", { href: "#/", text: "start" }), el("span", { text: "› key " + rt.value }));
    return;
  }
  const list = tokens(rt.value);
  const parts = [el("a", { href: "#/", text: "start" })];
  list.forEach((mv, i) => {
    parts.push(el("span", { text: "›" }));
    parts.push(i === list.length - 1 ? el("span", { text: mv }) : el("a", { href: movesHref(list.slice(0, i + 1)), text: mv }));
  });
  nav.replaceChildren(...parts);
}

function childHref(rt, c) {
  if (rt.kind === "moves") return movesHref(tokens(rt.value).concat([c.moves[0]]));
  return "#/pos/" + c.key;
}

function resultClass(res) {
  return "r-" + (res === "beyond target" ? "beyond" : res);
}

function resultText(res, score, diff, bounds) {
  const signed = (v) => (v > 0 ? "+" : "") + v;
  if (score) return res + " " + score[0] + "-" + score[1];
  if (bounds) return res + " " + signed(bounds[0]) + " to " + signed(bounds[1]);
  return diff === undefined ? res : res + " " + signed(diff);
}

function renderPosition(rt, p) {
  const size = p.rows.length, C = 44, M = 22;
  const board = svg("svg", { width: M + size * C + 4, height: M + size * C + 4, viewBox: "0 0 " + (M + size * C + 4) + " " + (M + size * C + 4), "aria-label": "board" });
  for (let i = 0; i < size; i++) {
    board.append(svg("text", { class: "label", x: M + i * C + C / 2, y: 15, "text-anchor": "middle", text: String.fromCharCode(97 + i) }));
    board.append(svg("text", { class: "label", x: 8, y: M + i * C + C / 2 + 4, "text-anchor": "middle", text: i + 1 }));
  }
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      board.append(svg("rect", { class: "square", x: M + c * C, y: M + r * C, width: C, height: C }));
      const ch = p.rows[r][c];
      if (ch !== ".") board.append(svg("circle", { class: ch === "X" ? "disc-black" : "disc-white", cx: M + c * C + C / 2, cy: M + r * C + C / 2, r: C * 0.4, "data-square": String.fromCharCode(97 + c) + (r + 1) }));
    }
  }
  const best = new Set(p.best_moves || []);
  for (const c of p.children) {
    for (const mv of c.moves) {
      const col = mv.charCodeAt(0) - 97, row = Number(mv.slice(1)) - 1;
      const cx = M + col * C + C / 2, cy = M + row * C + C / 2;
      const href = rt.kind === "moves" ? movesHref(tokens(rt.value).concat([mv])) : childHref(rt, c);
      board.append(svg("a", { class: "move", href: href, "data-move": mv, "data-result": c.result },
        svg("title", { text: mv + ": " + resultText(c.result, c.score, c.diff, c.bounds) + (best.has(mv) ? " (best)" : "") }),
        svg("rect", { class: "hit", x: M + col * C, y: M + row * C, width: C, height: C }),
        svg("circle", { class: "mark " + resultClass(c.result), cx: cx, cy: cy, r: best.has(mv) ? 9 : 6 })));
    }
  }
  $("#board").replaceChildren(board);

  const facts = [
    ["to move", p.side],
    ["ply", p.ply],
    ["result", resultText(p.result, p.score, p.diff, p.bounds) + (p.frontier ? " (" + p.frontier + " by the pruned solve)" : "")],
    ["best moves", (p.best_moves || []).join(" ") || "–"],
    ["key", el("a", { class: "key", href: "#/pos/" + p.key, text: p.key })],
    ["canonical", el("span", { class: "key", text: p.canonical })],
  ];
  $("#facts").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { "data-fact": k }, v)]));

  $("#children tbody").replaceChildren(...p.children.map((c) => el("tr", { "data-moves": c.moves.join(",") },
    el("td", { class: "text" }, ...c.moves.flatMap((mv, i) => [i ? ", " : null, el("a", { href: rt.kind === "moves" ? movesHref(tokens(rt.value).concat([mv])) : childHref(rt, c), class: best.has(mv) ? "best" : null, text: mv })])),
    el("td", { class: "text result", text: c.result }),
    el("td", { class: "score", text: c.score ? c.score[0] + "-" + c.score[1] : "" }),
    el("td", { class: "text" }, el("a", { class: "key", href: "#/pos/" + c.canonical, text: c.canonical })))));
  if (!p.children.length) {
    $("#children tbody").replaceChildren(el("tr", {}, el("td", { class: "text", colspan: 4, text: p.error ? "–" : "none: the game is over" })));
  }
  $("#parents-from").textContent = p.parents_undone
    ? "(canonical, by undoing a move: the last ply keeps backtracking rows for terminal positions only)"
    : "(canonical, from the backtracking rows)";
  $("#parents").replaceChildren(...p.parents.map((k) => el("li", {}, el("a", { class: "key", href: "#/pos/" + k, text: k }))));
  if (!p.parents.length) $("#parents").replaceChildren(el("li", { text: p.ply === 0 ? "none: the start position" : "–" }));
}

function onGoto(ev) {
  ev.preventDefault();
  const v = $("#goto-input").value.trim();
  location.hash = /^[bw][0-9a-f]{32}$/i.test(v) ? "#/pos/" + v.toLowerCase() : movesHref(tokens(v));
}

// ---- live progress

// duration writes seconds as hours, minutes and seconds: "1h 02m 03s".
function duration(s) {
  s = Math.round(s);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  const pad = (n) => String(n).padStart(2, "0");
  return h > 0 ? `${h}h ${pad(m)}m ${pad(sec)}s` : m > 0 ? `${m}m ${pad(sec)}s` : `${sec}s`;
}

let polls = 0;
let lastPly = null;

async function pollProgress() {
  const { status, body } = await getJSON("api/progress");
  if (status !== 200 || !body) {
    setTimeout(pollProgress, 5000);
    return;
  }
  const wait = body.poll_ms || 1000;
  const panel = $("#progress");
  if (!body.live) {
    panel.hidden = true;
    // Only a reader: refresh an incomplete run's report now and then.
    if (report && !report.complete) setTimeout(() => loadReport().then(() => setTimeout(pollProgress, 0)), wait * body.report_polls * 2);
    return;
  }
  panel.hidden = false;
  panel.classList.toggle("finished", body.finished);
  for (const dd of panel.querySelectorAll("dd[data-field]")) {
    const f = dd.dataset.field;
    let v = body[f];
    if (f === "ply") v = v < 0 ? "–" : v;
    else if (f === "current") v = body.finished ? "finished" : v || "starting";
    else if (f === "elapsed_seconds") v = v.toFixed(1) + " s";
    else if (f === "step") v = v || "–";
    else if (f === "step_eta_seconds") v = body.finished || !v ? "–" : duration(v);
    else if (f.endsWith("_per_second")) v = fmt(Math.round(v));
    else v = fmt(v);
    dd.textContent = v;
  }
  panel.dataset.tasks = body.tasks;
  polls++;
  if (body.finished || body.ply !== lastPly || polls % body.report_polls === 0) {
    lastPly = body.ply;
    await loadReport();
  }
  if (!body.finished) setTimeout(pollProgress, wait);
}

window.addEventListener("hashchange", showPosition);
document.addEventListener("DOMContentLoaded", () => {
  $("#goto").addEventListener("submit", onGoto);
  loadReport().then(pollProgress);
  showPosition();
});

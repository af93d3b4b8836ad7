// agentbus dashboard: no build step, no dependencies.
//
// State comes from /api/status (the server's figures as of log offset N),
// then every event after N arrives over /events (SSE) and is folded in
// here. Every few seconds the status is fetched again and replaces the
// local state; events at or below its offset are skipped, so nothing is
// counted twice. Rates come from the server (a 30 s window).
"use strict";

const params = new URLSearchParams(location.search);
const token = params.get("token");
const RECENT = 50;
const RESYNC_MS = 2000;
let stopped = false;
let listTimer = null;
let runModels = [];  // the run's default and test models (from the manifest)

function withToken(path) {
  if (!token) return path;
  return path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
}

async function getJSON(path) {
  const resp = await fetch(withToken(path), { cache: "no-store" });
  if (!resp.ok) throw new Error(path + ": HTTP " + resp.status);
  return resp.json();
}

const $ = (id) => document.getElementById(id);
const fmt = (x, d = 3) => (x === null || x === undefined || Number.isNaN(x) ? "-" : Number(x).toFixed(d));
const signed = (x) => (x >= 0 ? "+" : "") + fmt(x);

// ---- attribution snapshots: tolerant of the payload's exact shape --------
const VALUE_KEYS = ["phi", "value", "estimate", "mean", "shapley"];
const LO_KEYS = ["lo", "low", "ci_low", "lower", "ci_lo"];
const HI_KEYS = ["hi", "high", "ci_high", "upper", "ci_hi"];
const CI_KEYS = ["ci", "ci95", "interval", "intervals"];
const SE_KEYS = ["se", "stderr", "std_err", "sem"];
const isNum = (x) => typeof x === "number" && Number.isFinite(x);
const first = (obj, keys) => { for (const k of keys) if (k in obj) return obj[k]; return undefined; };

function interval(x) {
  if (Array.isArray(x) && x.length === 2) return [x[0], x[1]];
  if (x && typeof x === "object") return [first(x, LO_KEYS), first(x, HI_KEYS)];
  return [undefined, undefined];
}

function entry(slot, value, payload) {
  let phi, lo, hi, se;
  if (value && typeof value === "object") {
    phi = first(value, VALUE_KEYS);
    lo = first(value, LO_KEYS); hi = first(value, HI_KEYS);
    if (!isNum(lo) || !isNum(hi)) [lo, hi] = interval(first(value, CI_KEYS));
    se = first(value, SE_KEYS);
  } else phi = value;
  if (!isNum(phi)) return null;
  if (!isNum(lo) || !isNum(hi)) {
    for (const k of CI_KEYS) {
      const t = payload[k];
      if (t && typeof t === "object" && !Array.isArray(t) && slot in t) { [lo, hi] = interval(t[slot]); break; }
    }
  }
  if (!isNum(se)) {
    for (const k of SE_KEYS) {
      const t = payload[k];
      if (t && typeof t === "object" && slot in t) { se = t[slot]; break; }
    }
  }
  if ((!isNum(lo) || !isNum(hi)) && isNum(se)) { lo = phi - 1.96 * se; hi = phi + 1.96 * se; }
  return { slot, phi, lo: isNum(lo) ? lo : null, hi: isNum(hi) ? hi : null };
}

function slotRows(payload) {
  for (const key of ["shapley", "phi", "estimates", "values_by_slot"]) {
    const t = payload[key];
    let rows = [];
    if (t && typeof t === "object" && !Array.isArray(t)) {
      const nested = ("phi" in t || "shapley" in t || "estimates" in t) && !Object.values(t).every(isNum);
      if (nested) rows = slotRows(t);
      else for (const [slot, v] of Object.entries(t)) { const r = entry(slot, v, payload); if (r) rows.push(r); }
    } else if (Array.isArray(t)) {
      for (const item of t) {
        if (item && typeof item === "object") {
          const name = item.slot ?? item.name;
          const r = name !== undefined ? entry(String(name), item, payload) : null;
          if (r) rows.push(r);
        }
      }
    }
    if (rows.length) return rows;
  }
  return [];
}

// The attribution service's shape: {models: {test_model: {shapley: {slot: {value, ci_low, ci_high}}}}}
function normalizeSnapshot(payload) {
  const models = payload.models;
  if (models && typeof models === "object" && !Array.isArray(models)) {
    const rows = [];
    for (const [model, summary] of Object.entries(models)) {
      if (summary && typeof summary === "object") for (const r of slotRows(summary)) rows.push({ ...r, model });
    }
    if (rows.length) return rows;
  }
  return slotRows(payload);
}

// ---- local state ----------------------------------------------------------
let state = null;

// the project's key: members in slot order joined by "+", "" for none
function coalitionKey(c) {
  if (Array.isArray(c)) return c.map(String).join("+");
  return c === null || c === undefined ? "" : String(c);
}
const showKey = (k) => k || "(none)";

// endings that are the agent's own and count in v(S): agentbus/outcome.py AGENT_ENDINGS
// (tests/test_agent_failures.py checks the two lists agree)
const AGENT_ENDINGS = ["step_limit", "context_overflow", "agent_crash", "agent_timeout",
  "agent_no_result", "agent_refused", "agent_cap"];
const isAgentFailure = (kind) => typeof kind === "string" && kind.startsWith("agent_");

function counts(ev) {
  const o = ev.outcome || {};
  return o.error_kind === undefined || o.error_kind === null || AGENT_ENDINGS.includes(o.error_kind);
}

// Per-coalition means shown to the user come from the estimate (whole task
// blocks admitted in order), never from "whatever has ended so far", which
// over-represents quick successes while the run goes on.
function estimateRows(models) {
  const out = new Map();
  for (const [model, summary] of Object.entries(models || {})) {
    for (const [key, row] of Object.entries((summary && summary.coalitions) || {})) {
      if (row && isNum(row.mean)) out.set(model + "|" + key, { n: row.n, mean: row.mean });
    }
  }
  return out;
}

function fromStatus(s) {
  const coalitions = new Map();
  for (const c of s.coalitions || []) {
    coalitions.set((c.test_model || "") + "|" + c.key, { key: c.key, model: c.test_model || "",
      size: (c.coalition || []).length, n: c.n,
      rewardSum: (c.mean_reward || 0) * c.n, successes: (c.success_rate || 0) * c.n, errors: c.errors });
  }
  const out = { offset: s.offset || 0, total: s.total, done: s.done, errors: s.errors,
    agentFailures: s.agent_failures || 0,
    rewardSum: (s.mean_reward || 0) * (s.done_this_process || 0), counted: s.done_this_process || 0,
    eps: s.episodes_per_s, tps: s.tokens_per_s, phi: s.phi || [], coalitions,
    recent: s.recent || [], finished: s.finished, snapshotN: s.phi_episodes ?? null,
    phiNote: s.phi_note ?? null, estimate: estimateRows(s.estimate_coalitions),
    admittedTasks: s.admitted_tasks ?? null, readOnly: !!s.read_only };
  if (s.phi_estimable === false) out.phi = [];
  out.phiNote = notEstimableText(out.phiNote);
  return out;
}

// "not estimable yet: <why>", whatever the source said; null when there is nothing to say
function notEstimableText(note) {
  if (!note) return null;
  const text = String(note);
  return /^not estimable yet/i.test(text) ? text : "not estimable yet: " + text;
}

// Reads a snapshot defensively: older payloads have no "estimable"/"reason";
// there, no Shapley value at all means not estimable.
function snapshotView(ev) {
  const rows = normalizeSnapshot(ev);
  let estimable = ev.estimable === undefined || ev.estimable === null ? rows.length > 0 : !!ev.estimable;
  if (!rows.length) estimable = false;
  let note = null;
  if (!estimable) {
    note = ev.reason || null;
    if (!note) {
      for (const [model, summary] of Object.entries(ev.models || {})) {
        if (summary && summary.not_estimable) { note = model + ": " + summary.not_estimable; break; }
      }
    }
    note = notEstimableText(note || "no estimate yet");
  }
  return { rows: estimable ? rows : [], note };
}

function apply(ev) {
  if (!state || typeof ev.seq !== "number" || ev.seq <= state.offset) return;
  state.offset = ev.seq;
  if (ev.type === "episode.ended") {
    const o = ev.outcome || {};
    const key = coalitionKey(ev.coalition);
    const model = ev.test_model ? String(ev.test_model) : "";
    let row = state.coalitions.get(model + "|" + key);
    if (!row) {
      row = { key, model, size: Array.isArray(ev.coalition) ? ev.coalition.length : 0, n: 0,
        rewardSum: 0, successes: 0, errors: 0 };
      state.coalitions.set(model + "|" + key, row);
    }
    const reward = isNum(o.reward) ? o.reward : 0;
    if (counts(ev)) {
      state.done += 1; state.counted += 1; state.rewardSum += reward;
      row.n += 1; row.rewardSum += reward; row.successes += o.success ? 1 : 0;
      if (isAgentFailure(o.error_kind)) state.agentFailures += 1;
    } else { state.errors += 1; row.errors += 1; }
    state.recent.unshift({ seq: ev.seq, episode_id: ev.episode_id, task_id: ev.task_id, coalition: key, test_model: model,
      reward, success: !!o.success, steps: o.steps || 0,
      tokens: (o.prompt_tokens || 0) + (o.completion_tokens || 0), error_kind: o.error_kind || null, repeat: ev.repeat,
      error: o.error || null });
    state.recent.length = Math.min(state.recent.length, RECENT);
  } else if (ev.type === "attribution.snapshot") {
    const view = snapshotView(ev);
    state.phi = view.rows;  // never a number while the estimate is not honest yet
    state.phiNote = view.note;
    state.snapshotN = ev.n ?? ev.episodes ?? ev.n_episodes ?? ev.count ?? null;
    // an adaptive run that stops on the data leads with the anytime-valid interval
    state.phiInterval = ev.interval === "anytime-valid" ? "95% anytime-valid interval" : "95% interval";
    state.estimate = estimateRows(ev.estimable === false ? {} : ev.models);
    if (isNum(ev.admitted_tasks)) state.admittedTasks = ev.admitted_tasks;
    pollHistory();
  } else if (ev.type === "run.started") {
    if (isNum(ev.total)) state.total = ev.total;
    state.finished = false;
  } else if (ev.type === "run.finished") {
    state.finished = true;
  }
  scheduleRender();
}

// ---- rendering ------------------------------------------------------------
let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => { renderQueued = false; render(); });
}

function render() {
  if (!state) return;
  $("done").textContent = state.done;
  $("total").textContent = state.total ?? "?";
  $("eps").textContent = fmt(state.eps, 2);
  $("tps").textContent = fmt(state.tps, 0);
  $("errors").textContent = state.errors;
  $("agent-failures").textContent = state.agentFailures || 0;
  // no pooled mean reward: it mixes coalitions and is biased mid-run
  $("reward").textContent = isNum(state.admittedTasks) ? String(state.admittedTasks) : "-";
  $("meter-fill").style.width = state.total ? Math.min(100, (100 * state.done) / state.total) + "%" : "0";
  if (state.finished && !stopped) $("conn").textContent = "finished";
  renderPhi();
  renderCoalitions();
  // the list follows a live run at most once a second (the resync re-renders meanwhile)
  if (state.offset !== listedAt && !listTimer) {
    listTimer = setTimeout(() => { listTimer = null; refreshEpisodes(); },
      Math.max(0, 1000 - (Date.now() - listedTime)));
  }
}

const SVG = "http://www.w3.org/2000/svg";
function svgEl(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

function renderPhi() {
  const svg = $("phi-chart");
  const rows = state.phi;
  $("phi-empty").hidden = rows.length > 0;
  $("phi-empty").textContent = state.phiNote || "no attribution snapshot yet";
  $("phi-n").textContent = rows.length && state.snapshotN ? "(" + state.snapshotN + " episodes in the estimate)" : "";
  svg.replaceChildren();
  if (!rows.length) { svg.setAttribute("height", "0"); return; }
  const width = 720, label = 150, right = 170, rowH = 28, axisH = 36;
  let span = 0.05;
  for (const r of rows) for (const x of [r.phi, r.lo, r.hi]) if (isNum(x)) span = Math.max(span, Math.abs(x));
  const plotW = width - label - right;
  const x = (v) => label + plotW / 2 + (v / span) * (plotW / 2);
  const bottom = rows.length * rowH + 6;
  svg.setAttribute("height", String(bottom + axisH));
  // the axis: ticks in phi units under the bars, the zero line through them
  for (const t of niceTicks(-span, span, 6)) {
    svg.appendChild(svgEl("line", { class: t === 0 ? "axis zero" : "grid", x1: x(t), x2: x(t), y1: 0, y2: bottom }));
    svg.appendChild(svgEl("text", { class: "tick", x: x(t), y: bottom + 14, "text-anchor": "middle" }, (t > 0 ? "+" : "") + t.toFixed(2)));
  }
  svg.appendChild(svgEl("line", { class: "axis", x1: label, x2: label + plotW, y1: bottom, y2: bottom }));
  svg.appendChild(svgEl("text", { class: "tick axis-title", x: label + plotW / 2, y: bottom + 30, "text-anchor": "middle" },
    "phi: change in mean reward the slot's test model brings (" + (state.phiInterval || "95% interval") + ")"));
  const slotOrder = [];
  for (const r of rows) if (!slotOrder.includes(r.slot)) slotOrder.push(r.slot);
  const several = new Set(rows.map((r) => r.model || "")).size > 1;
  rows.forEach((r, i) => {
    const y = 5 + i * rowH;
    const g = svgEl("g", { class: "phi-row", "data-slot": r.slot, "data-model": r.model || "" });
    g.appendChild(svgEl("text", { x: 0, y: y + 16 }, several ? r.slot + " · " + r.model : r.slot));
    const x0 = Math.min(x(0), x(r.phi));
    const w = Math.max(1, Math.abs(x(r.phi) - x(0)));
    g.appendChild(svgEl("rect", { class: "bar " + (r.phi >= 0 ? "pos" : "neg"), x: x0, y: y + 4,
      width: w, height: rowH - 10, "data-slot": r.slot, "data-phi": r.phi,
      fill: COLORS[slotOrder.indexOf(r.slot) % COLORS.length] }));
    if (isNum(r.lo) && isNum(r.hi)) {
      const cy = y + rowH / 2 - 1;
      g.appendChild(svgEl("line", { class: "ci", x1: x(r.lo), x2: x(r.hi), y1: cy, y2: cy }));
      for (const v of [r.lo, r.hi]) g.appendChild(svgEl("line", { class: "ci", x1: x(v), x2: x(v), y1: cy - 5, y2: cy + 5 }));
    }
    const ci = isNum(r.lo) && isNum(r.hi) ? "  [" + signed(r.lo) + ", " + signed(r.hi) + "]" : "";
    g.appendChild(svgEl("text", { class: "phi-value", x: width - right + 8, y: y + 16 }, signed(r.phi) + ci));
    svg.appendChild(g);
  });
}

// ---- the course of phi over the run ----------------------------------------
// Points come condensed from /api/attribution/history (the server folds every
// attribution.snapshot of the log into one small point), so a page opened
// mid-run or after the run draws the whole course. A point that is not
// estimable carries no numbers: its stretch stays empty.
const history = { points: [], lastSeq: -1, busy: false, again: false };
const COLORS = ["#4a78c2", "#d9822b", "#2f7d4f", "#b3412e", "#7b5ea7", "#3a9ca6", "#a0743b", "#c2477f"];

async function pollHistory() {
  // one request at a time, so no point arrives twice; a request made meanwhile runs after
  if (history.busy) { history.again = true; return; }
  history.busy = true;
  history.again = false;
  try {
    const h = await getJSON("api/attribution/history?after=" + history.lastSeq);
    const fresh = (h.points || []).filter((p) => isNum(p.seq) && p.seq > history.lastSeq);
    if (!fresh.length) return;
    history.points.push(...fresh);
    history.lastSeq = fresh[fresh.length - 1].seq;
    renderHistory();
  } catch (err) {
    // the next resync tries again
  } finally {
    history.busy = false;
    if (history.again) pollHistory();
  }
}

// each (model, slot): segments of consecutive estimable points [{x, v, lo, hi}]
function historySeries() {
  const series = new Map();
  let open = new Set();
  for (const p of history.points) {
    const x = p.episodes;
    if (!p.estimable || !isNum(x)) { open = new Set(); continue; }
    const now = new Set();
    for (const [model, slots] of Object.entries(p.models || {})) {
      for (const [slot, triple] of Object.entries(slots || {})) {
        const [v, lo, hi] = Array.isArray(triple) ? triple : [];
        if (!isNum(v)) continue;
        const key = model + "\u0000" + slot;
        if (!series.has(key)) series.set(key, { model, slot, segments: [] });
        const s = series.get(key);
        if (!open.has(key) || !s.segments.length) s.segments.push([]);
        s.segments[s.segments.length - 1].push({ x, v, lo: isNum(lo) ? lo : null, hi: isNum(hi) ? hi : null });
        now.add(key);
      }
    }
    open = now;
  }
  return [...series.values()];
}

function niceTicks(lo, hi, count) {
  const span = hi - lo || 1;
  const raw = span / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => span / s <= count) || 10 * mag;
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) ticks.push(Math.abs(t) < 1e-12 ? 0 : t);
  return ticks;
}

function renderHistory() {
  const box = $("phi-history");
  const series = historySeries();
  const last = history.points[history.points.length - 1];
  const empty = $("history-empty");
  empty.hidden = series.length > 0;
  if (!series.length) {
    empty.textContent = last ? notEstimableText(last.reason || "no estimate yet") : "no attribution snapshot yet";
    box.replaceChildren();
    return;
  }
  const models = [...new Set(series.map((s) => s.model))].sort();
  const slots = [];
  for (const s of series) if (!slots.includes(s.slot)) slots.push(s.slot);
  const charts = models.map((model) => historyChart(model, series.filter((s) => s.model === model), slots, models.length > 1));
  box.replaceChildren(...charts);
}

function historyChart(model, series, slots, titled) {
  const width = 720, height = 230, left = 52, right = 150, top = titled ? 24 : 10, bottom = 34;
  const pts = series.flatMap((s) => s.segments.flat());
  let x0 = 0, x1 = Math.max(...pts.map((p) => p.x));
  if (x1 <= x0) x1 = x0 + 1;
  let y0 = 0, y1 = 0;
  for (const p of pts) for (const v of [p.v, p.lo, p.hi]) if (isNum(v)) { y0 = Math.min(y0, v); y1 = Math.max(y1, v); }
  const pad = Math.max(0.02, (y1 - y0) * 0.06);
  y0 -= pad; y1 += pad;
  const X = (v) => left + ((v - x0) / (x1 - x0)) * (width - left - right);
  const Y = (v) => top + (1 - (v - y0) / (y1 - y0)) * (height - top - bottom);
  const svg = svgEl("svg", { class: "phi-history-chart", width, height, "data-model": model, role: "img",
    "aria-label": "Shapley value per slot over the run" + (titled ? " for " + model : "") });
  if (titled) svg.appendChild(svgEl("text", { class: "chart-title", x: left, y: 15 }, "test model " + model));
  for (const t of niceTicks(y0, y1, 5)) {
    svg.appendChild(svgEl("line", { class: t === 0 ? "axis zero" : "grid", x1: left, x2: width - right, y1: Y(t), y2: Y(t) }));
    svg.appendChild(svgEl("text", { class: "tick", x: left - 6, y: Y(t) + 4, "text-anchor": "end" }, t.toFixed(2)));
  }
  for (const t of niceTicks(x0, x1, 6)) {
    if (t !== Math.round(t)) continue;
    svg.appendChild(svgEl("line", { class: "axis", x1: X(t), x2: X(t), y1: height - bottom, y2: height - bottom + 4 }));
    svg.appendChild(svgEl("text", { class: "tick", x: X(t), y: height - bottom + 16, "text-anchor": "middle" }, String(t)));
  }
  svg.appendChild(svgEl("line", { class: "axis", x1: left, x2: width - right, y1: height - bottom, y2: height - bottom }));
  svg.appendChild(svgEl("text", { class: "tick", x: (left + width - right) / 2, y: height - 4, "text-anchor": "middle" },
    "episodes in the estimate"));
  series.forEach((s) => {
    const color = COLORS[slots.indexOf(s.slot) % COLORS.length];
    const g = svgEl("g", { class: "phi-series", "data-slot": s.slot, "data-model": model,
      "data-points": String(s.segments.reduce((n, seg) => n + seg.length, 0)) });
    for (const seg of s.segments) {
      const banded = seg.filter((p) => p.lo !== null && p.hi !== null);
      if (banded.length) {
        const upper = banded.map((p) => X(p.x) + "," + Y(p.hi));
        const lower = banded.slice().reverse().map((p) => X(p.x) + "," + Y(p.lo));
        const pad1 = banded.length === 1 ? [(X(banded[0].x) + 3) + "," + Y(banded[0].hi), (X(banded[0].x) + 3) + "," + Y(banded[0].lo)] : [];
        g.appendChild(svgEl("polygon", { class: "band", fill: color, points: [...upper, ...pad1, ...lower].join(" ") }));
      }
      g.appendChild(svgEl("polyline", { class: "line", stroke: color, points: seg.map((p) => X(p.x) + "," + Y(p.v)).join(" ") }));
    }
    const lastSeg = s.segments[s.segments.length - 1];
    const end = lastSeg[lastSeg.length - 1];
    g.appendChild(svgEl("circle", { class: "dot", fill: color, cx: X(end.x), cy: Y(end.v), r: 3 }));
    const ly = top + 14 + slots.indexOf(s.slot) * 18;
    g.appendChild(svgEl("rect", { x: width - right + 12, y: ly - 9, width: 10, height: 10, fill: color }));
    const ci = end.lo !== null && end.hi !== null ? " [" + signed(end.lo) + ", " + signed(end.hi) + "]" : "";
    g.appendChild(svgEl("text", { class: "legend", x: width - right + 26, y: ly }, s.slot + " " + signed(end.v)));
    if (ci) g.appendChild(svgEl("title", {}, s.slot + ": " + signed(end.v) + ci + " at " + end.x + " episodes"));
    svg.appendChild(g);
  });
  return svg;
}

function renderCoalitions() {
  const rows = [...state.coalitions.values()].sort(
    (a, b) => a.model.localeCompare(b.model) || a.size - b.size || a.key.localeCompare(b.key));
  const several = new Set(rows.map((r) => r.model)).size > 1;
  const body = $("coalitions").tBodies[0];
  body.replaceChildren(...rows.map((r) => {
    const tr = document.createElement("tr");
    const est = (state.estimate || new Map()).get(r.model + "|" + r.key);
    for (const v of [several ? showKey(r.key) + " · " + r.model : showKey(r.key), r.n, est ? est.n : 0, est ? fmt(est.mean) : "-", r.errors]) {
      const td = document.createElement("td"); td.textContent = v; tr.appendChild(td);
    }
    return tr;
  }));
}

// ---- wiring ---------------------------------------------------------------
async function resync() {
  try {
    const s = await getJSON("api/status");
    const fresh = fromStatus(s);
    if (!state || fresh.offset >= state.offset) state = fresh;
    else { state.eps = fresh.eps; state.tps = fresh.tps; }
    scheduleRender();
    pollHistory();
    return true;
  } catch (err) {
    if (state && state.finished) {
      // the run ended and its process stopped serving: the page keeps its final state
      $("conn").textContent = "finished (server stopped; reopen with python -m agentbus.view)";
      $("conn").className = "pill";
      stopped = true;
    } else {
      $("conn").textContent = "status unavailable";
      $("conn").className = "pill down";
    }
    return false;
  }
}

function connect() {
  const es = new EventSource(withToken("events?from=" + state.offset));
  es.onopen = () => { $("conn").textContent = "live"; $("conn").className = "pill live"; };
  es.onerror = () => {
    if (state && state.finished) {  // the run is over and its log closed: nothing more will come
      es.close();
      $("conn").textContent = "finished"; $("conn").className = "pill";
      return;
    }
    $("conn").textContent = "reconnecting"; $("conn").className = "pill down";
  };
  es.onmessage = (msg) => {
    try { apply(JSON.parse(msg.data)); } catch (err) { console.error(err); }
  };
}

// ---- cost: the projected run cost and the --pareto front ------------------
// Their own stream, from the start of the log and filtered to the two types,
// so a page opened late still shows them (each is published once or twice).
const usd = (x) => (isNum(x) ? "$" + (Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(3)) : "-");
function ci(row, f) {
  if (!row || !isNum(row.mean)) return "n/a";
  return isNum(row.ci_low) ? f(row.mean) + " [" + f(row.ci_low) + ", " + f(row.ci_high) + "]" : f(row.mean);
}
function showCost(ev) {
  $("cost-panel").hidden = false;
  if (ev.type === "cost.estimate") {
    const range = isNum(ev.usd_low) ? " [" + usd(ev.usd_low) + ", " + usd(ev.usd_high) + "]" : "";
    const simulated = runModels.length > 0 && runModels.every((m) => String(m).startsWith("sim:"));
    const priced = simulated ? " at list prices (simulated models: nothing is billed), " : " at list prices, ";
    $("cost-estimate").textContent = "whole run, projected: " + usd(ev.usd) + range + priced +
      Math.round(ev.tokens).toLocaleString() + " tokens sent (" + Math.round(100 * ev.confidence) +
      "% interval, from the first " + ev.blocks + " of " + ev.of + " task blocks)";
  } else if (ev.type === "pareto.front") {
    $("pareto-panel").hidden = false;
    $("pareto-n").textContent = "(" + (ev.front || []).length + " of " + ev.assignments + " assignments)";
    const chosen = new Set((ev.chosen || []).map((p) => p.label));
    const body = $("pareto").querySelector("tbody");
    body.replaceChildren();
    for (const p of ev.front || []) {
      const tr = document.createElement("tr");
      for (const text of [p.label, p.source, ci(p.acc, (x) => fmt(x)), ci(p.cost_usd, usd),
        chosen.has(p.label) ? "yes" : ""]) {
        const td = document.createElement("td"); td.textContent = text; tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    $("pareto-cheapest").textContent = ev.cheapest_overlapping
      ? "cheapest assignment whose accuracy interval overlaps the best one's: " + ev.cheapest_overlapping : "";
  }
}
function watchCost() {
  const es = new EventSource(withToken("events?from=0&type=cost.estimate,pareto.front"));
  es.onmessage = (msg) => {
    try { showCost(JSON.parse(msg.data)); } catch (err) { console.error(err); }
  };
  es.onerror = () => { if (state && (state.finished || state.readOnly)) es.close(); };
}

// ---- variants: what each varied slot runs on each side (--vary) -----------
// From run.started (the whole log, that one type), so a late page shows them;
// a run without --vary has none and the line stays hidden.
function showVariants(ev) {
  const byModel = ev.variants || {};
  const lines = [];
  for (const [model, slots] of Object.entries(byModel)) {
    const parts = Object.entries(slots || {}).map(([slot, v]) => slot + ": " + v.default + " \u2192 " + v.test);
    if (parts.length) lines.push((Object.keys(byModel).length > 1 ? model + " \u2014 " : "") + parts.join("; "));
  }
  $("variants").hidden = lines.length === 0;
  $("variants").textContent = lines.length ? "variants (default \u2192 test): " + lines.join(" | ") : "";
}
function watchVariants() {
  const es = new EventSource(withToken("events?from=0&type=run.started"));
  es.onmessage = (msg) => {
    try { showVariants(JSON.parse(msg.data)); } catch (err) { console.error(err); }
  };
  es.onerror = () => { if (state && (state.finished || state.readOnly)) es.close(); };
}

async function main() {
  wireViews();
  showBlame();
  getJSON("api/manifest").then((m) => {
    const c = m.config || {};
    const tests = Array.isArray(c.test) ? c.test.join(", ") : c.test;
    runModels = [...(Array.isArray(c.test) ? c.test : [c.test]), c.default].filter(Boolean);
    const bits = [c.preset && "preset " + c.preset, c.env, tests && "test " + tests,
      c.default && "default " + c.default]
      .filter(Boolean);
    $("run-name").textContent = bits.join(" · ");
  }).catch(() => {});
  while (!(await resync())) await new Promise((r) => setTimeout(r, 2000));
  if (state.readOnly) {
    // agentbus.view: the log as it was when the viewer opened it; no live stream to follow
    $("conn").textContent = state.finished ? "finished" : "log snapshot (the run had not finished)";
    $("conn").className = "pill";
  } else connect();
  watchVariants();
  watchCost();
  const timer = setInterval(() => { if (stopped) clearInterval(timer); else resync(); }, RESYNC_MS);
  loadFacets();
  window.addEventListener("hashchange", route);
  route();
}

main();

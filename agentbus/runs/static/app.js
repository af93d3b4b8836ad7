// agentbus dashboard: no build step, no dependencies.
//
// State comes from /api/status (the server's figures as of log offset N),
// then every event after N arrives over /events (SSE) and is folded in
// here. Every few seconds the status is fetched again and replaces the
// local state; events at or below its offset are skipped, so nothing is
// counted twice. Rates come from the server (a 30 s window).
//
// The page loads, in order, views.js (episodes, transcripts, diffs, flips),
// snapshot.js (reading an attribution snapshot), history.js (phi over the run),
// cost.js (cost, Pareto front, variants) and this file (state, rendering,
// wiring); classic scripts, so their top-level names are one shared scope.
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

// ---- local state ----------------------------------------------------------
let state = null;

// the project's key: members in slot order joined by "+", "" for none
function coalitionKey(c) {
  if (Array.isArray(c)) return c.map(String).join("+");
  return c === null || c === undefined ? "" : String(c);
}
// the empty coalition (every slot on the default) is EMPTY_LABEL everywhere (views.js)
const showKey = (k) => k || EMPTY_LABEL;

// endings that are the agent's own and count in v(S): agentbus/core/outcome.py AGENT_ENDINGS
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
      rewardSum: (c.mean_reward || 0) * c.n, successes: (c.success_rate || 0) * c.n, errors: c.errors,
      agentFailures: c.agent_failures || 0 });
  }
  const out = { offset: s.offset || 0, total: s.total, done: s.done, errors: s.errors,
    agentFailures: s.agent_failures || 0,
    rewardSum: (s.mean_reward || 0) * (s.done_this_process || 0), counted: s.done_this_process || 0,
    eps: s.episodes_per_s, tps: s.tokens_per_s, phi: s.phi || [], coalitions,
    recent: s.recent || [], finished: s.finished, stopped: s.stopped || null,
    snapshotN: s.phi_episodes ?? null,
    phiNote: s.phi_note ?? null, estimate: estimateRows(s.estimate_coalitions),
    admittedTasks: s.admitted_tasks ?? null, readOnly: !!s.read_only, headline: s.headline || [],
    spent: s.spent || null, bill: s.bill || null, durationS: s.duration_s ?? null };
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
        rewardSum: 0, successes: 0, errors: 0, agentFailures: 0 };
      state.coalitions.set(model + "|" + key, row);
    }
    const reward = isNum(o.reward) ? o.reward : 0;
    if (counts(ev)) {
      state.done += 1; state.counted += 1; state.rewardSum += reward;
      row.n += 1; row.rewardSum += reward; row.successes += o.success ? 1 : 0;
      if (isAgentFailure(o.error_kind)) { state.agentFailures += 1; row.agentFailures += 1; }
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
    state.headline = ev.headline || [];  // the console's and results.md's MVP line, same words
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
    state.stopped = ev.stopped || null;
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
  // a finished run's rates are over its own duration; a live run's over its recent episodes
  $("rate-span").textContent = isNum(state.durationS) ? "over the run's " + fmt(state.durationS, 1) + " s" : "";
  $("errors").textContent = state.errors;
  $("agent-failures").textContent = state.agentFailures || 0;
  // no pooled mean reward: it mixes coalitions and is biased mid-run
  $("reward").textContent = isNum(state.admittedTasks) ? String(state.admittedTasks) : "-";
  $("meter-fill").style.width = state.total ? Math.min(100, (100 * state.done) / state.total) + "%" : "0";
  if (state.finished && !stopped) $("conn").textContent = finishedText();
  renderPhi();
  renderCoalitions();
  renderCost();
  // the list follows a live run at most once a second (the resync re-renders meanwhile)
  if (state.offset !== listedAt && !listTimer) {
    listTimer = setTimeout(() => { listTimer = null; refreshEpisodes(); },
      Math.max(0, 1000 - (Date.now() - listedTime)));
  }
}

// "finished", or "stopped: <reason>" for a run that stopped early (misconfigured, budget, ...)
function finishedText() {
  return state && state.stopped ? "stopped: " + state.stopped : "finished";
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
  $("phi-headline").textContent = rows.length ? (state.headline || []).join("\n") : "";
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

function renderCoalitions() {
  const rows = [...state.coalitions.values()].sort(
    (a, b) => a.model.localeCompare(b.model) || a.size - b.size || a.key.localeCompare(b.key));
  const several = new Set(rows.map((r) => r.model)).size > 1;
  const body = $("coalitions").tBodies[0];
  body.replaceChildren(...rows.map((r) => {
    const tr = document.createElement("tr");
    const est = (state.estimate || new Map()).get(r.model + "|" + r.key);
    // the agent's own failures count in v(S): shown beside the episodes they are part of
    const ended = r.agentFailures ? r.n + " (" + r.agentFailures + " agent failures)" : r.n;
    for (const v of [several ? showKey(r.key) + " · " + r.model : showKey(r.key), ended, est ? est.n : 0, est ? fmt(est.mean) : "-", r.errors]) {
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
    else Object.assign(state, { eps: fresh.eps, tps: fresh.tps, spent: fresh.spent, bill: fresh.bill });
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
      $("conn").textContent = finishedText(); $("conn").className = "pill";
      return;
    }
    $("conn").textContent = "reconnecting"; $("conn").className = "pill down";
  };
  es.onmessage = (msg) => {
    try { apply(JSON.parse(msg.data)); } catch (err) { console.error(err); }
  };
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
    $("conn").textContent = state.finished ? finishedText()
      : "partial: the run was interrupted before its end (no run.finished in the log)";
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

// agentbus dashboard views: the episode list, transcripts, coalition diffs, slot flips.
//
// Loaded before app.js and sharing its globals ($, getJSON, state, fmt; COLORS from
// history.js).
// Everything here is fetched page by page from the server's episode index
// (api/episodes?offset&limit&filters, api/transcript/ID, api/diff?a&b,
// api/flips?slot), so a 10,000-episode run costs the browser one page at a time.
// The address's hash names the open view (#episode=ID, #diff=A&b=B, #flips=SLOT),
// so a transcript or a diff can be linked to and reloaded; the query keeps the episode
// list's filters and page (filters.js).
"use strict";

const PAGE = 25;
const list = { offset: 0, total: 0, busy: false, again: false };
let listedAt = -1;
let listedTime = 0;
let facets = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return node;
}

// the empty coalition (every slot on the default): agentbus/core/coalitions.py EMPTY_LABEL
const EMPTY_LABEL = "(none)";
const showCoalition = (k) => (k ? k : EMPTY_LABEL);
// a user's agent's own failures (agentbus/core/outcome.py AGENT_FAILURES), in words
const FAILURE_WORDS = { agent_crash: "agent crashed", agent_timeout: "agent ran past its time limit",
  agent_no_result: "agent gave no result", agent_refused: "agent called a refused module",
  agent_cap: "agent exceeded a cap" };
const failureLabel = (k) => (FAILURE_WORDS[k] ? FAILURE_WORDS[k] + " (" + k + ")" : String(k));
const short = (v, n = 200) => { const t = typeof v === "string" ? v : JSON.stringify(v); return t.length > n ? t.slice(0, n - 1) + "\u2026" : t; };
let knownSlots = [];  // from the open transcript, until the facets arrive
const slotColor = (slot) => {
  const slots = facets && facets.slots.length ? facets.slots : knownSlots;
  const i = slots.indexOf(slot);
  return i < 0 ? "var(--muted)" : COLORS[i % COLORS.length];
};

// ---- the episode list ------------------------------------------------------
async function refreshEpisodes() {
  if (list.busy) { list.again = true; return; }
  list.busy = true; list.again = false;
  const seen = state ? state.offset : 0;
  try {
    const q = filters();
    q.set("offset", String(list.offset)); q.set("limit", String(PAGE));
    const page = await getJSON("api/episodes?" + q.toString());
    list.total = page.total;
    listedAt = seen;
    listedTime = Date.now();
    renderEpisodeRows(page.rows || []);
    const last = Math.min(page.total, list.offset + PAGE);
    $("page-info").textContent = page.total
      ? (list.offset + 1) + "\u2013" + last + " of " + page.total.toLocaleString() + " episodes"
      : "no episode matches";
    $("page-prev").disabled = list.offset === 0;
    $("page-next").disabled = last >= page.total;
  } catch (err) {
    // the next render tries again
  } finally {
    list.busy = false;
    if (list.again) refreshEpisodes();
  }
}

function renderEpisodeRows(rows) {
  const body = $("recent").tBodies[0];
  body.replaceChildren(...rows.map((e) => {
    const status = !e.counts ? e.failure : e.success ? "ok" : e.failure || "fail";
    const tr = el("tr", { "data-episode": e.episode_id, class: !e.counts ? "err" : e.success ? "ok" : "fail",
      title: e.episode_id, onclick: () => { location.hash = "episode=" + encodeURIComponent(e.episode_id); } },
      el("td", {}, e.task_id + (e.repeat ? " #" + e.repeat : "")),
      el("td", {}, showCoalition(e.coalition) + (facets && facets.models.length > 1 ? " \u00b7 " + e.test_model : "")),
      el("td", {}, fmt(e.reward, 2)), el("td", {}, e.steps), el("td", {}, e.tokens.toLocaleString()),
      el("td", { class: "status" }, status));
    return tr;
  }));
}

function fillSelect(id, values, label) {
  const sel = $(id);
  const key = (FILTERS.find(([i]) => i === id) || [])[1];
  const keep = key && wanted.has(key) ? wanted.get(key) : sel.value;
  sel.replaceChildren(el("option", { value: id === "f-coalition" ? "*" : "" }, "any " + label),
    ...values.map((v) => el("option", { value: v },
      id === "f-coalition" ? showCoalition(v) : id === "f-failure" ? failureLabel(v) : v)));
  if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
}

async function loadFacets() {
  try {
    facets = await getJSON("api/facets");
  } catch (err) {
    setTimeout(loadFacets, 2000);
    return;
  }
  fillSelect("f-coalition", facets.coalitions, "coalition");
  fillSelect("f-model", facets.models, "test model");
  fillSelect("f-outcome", facets.outcomes, "outcome");
  fillSelect("f-failure", facets.failures, "failure kind");
  $("f-model").hidden = facets.models.length < 2;
  $("task-list").replaceChildren(...facets.tasks.slice(0, 2000).map((t) => el("option", { value: t })));
  for (const [id, values] of [["pair-a", facets.coalitions], ["pair-b", facets.coalitions]]) {
    const sel = $(id); const keep = sel.value;
    sel.replaceChildren(...values.map((v) => el("option", { value: v }, showCoalition(v))));
    if (keep) sel.value = keep;
  }
  if (!$("pair-b").dataset.touched && facets.coalitions.length > 1) $("pair-b").value = facets.coalitions[facets.coalitions.length - 1];
  $("pair-task").replaceChildren(...facets.tasks.slice(0, 2000).map((t) => el("option", { value: t }, t)));
  $("pair-model").replaceChildren(...facets.models.map((m) => el("option", { value: m }, m)));
  $("pair-model").hidden = facets.models.length < 2;
  renderFlipLinks();
  refreshEpisodes();
  if (state && !state.finished) setTimeout(loadFacets, 10000);  // new tasks and kinds appear while live
}

// ---- slots whose test model changed outcomes -------------------------------
async function renderFlipLinks() {
  const box = $("flip-links");
  if (!facets || !facets.slots.length) return;
  const items = [];
  for (const slot of facets.slots) {
    try {
      const f = await getJSON("api/flips?slot=" + encodeURIComponent(slot));
      items.push(el("a", { href: "#flips=" + encodeURIComponent(slot), class: "flip-link", "data-slot": slot,
        style: "border-color:" + slotColor(slot) }, slot + ": " + f.total + " changed"));
    } catch (err) { /* shown on the next load */ }
  }
  box.replaceChildren(el("span", { class: "muted" },
    "episodes where putting the slot on the test model changed the outcome: "), ...items);
}

async function showFlips(slot) {
  openDetail("flips-panel");
  $("flips-title").textContent = slot;
  const body = $("flips").tBodies[0];
  body.replaceChildren();
  const f = await getJSON("api/flips?slot=" + encodeURIComponent(slot));
  $("flips-note").textContent = f.total + " pairs of episodes on the same task whose coalitions differ only in " + slot +
    " and whose outcomes differ" + (f.total > f.flips.length ? " (first " + f.flips.length + " shown)" : "");
  for (const p of f.flips) {
    const href = "#diff=" + encodeURIComponent(p.without.episode_id) + "&b=" + encodeURIComponent(p.with.episode_id);
    body.appendChild(el("tr", {},
      el("td", {}, p.task_id + (p.repeat ? " #" + p.repeat : "")),
      el("td", {}, showCoalition(p.without.coalition)), el("td", {}, fmt(p.without.reward, 2)),
      el("td", {}, showCoalition(p.with.coalition)), el("td", {}, fmt(p.with.reward, 2)),
      el("td", { class: p.change > 0 ? "pos" : "neg" }, (p.change > 0 ? "+" : "") + fmt(p.change, 2)),
      el("td", {}, el("a", { href, class: "diff-link" }, "diff"))));
  }
}

// ---- one episode as a conversation -----------------------------------------
function fieldList(fields) {
  const skip = new Set(["round", "steps", "guide", "max_steps", "env", "task_id"]);
  const entries = Object.entries(fields || {}).filter(([k]) => !skip.has(k));
  if (!entries.length) return null;
  return el("dl", { class: "fields" }, ...entries.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, short(v, 400))]));
}

function callBlock(call) {
  const t = call.tokens || [0, 0];
  const summary = "prompt sent to " + call.model + " (" + t[0] + " tokens in, " + t[1] + " out" +
    (call.cached ? "; answer shared with an identical call of another coalition" : "") + ")";
  return el("details", { class: "call" }, el("summary", {}, summary),
    ...(call.prompt || []).map((m) => el("div", { class: "msg role-" + m.role }, el("div", { class: "role" }, m.role), el("pre", {}, m.content))),
    el("div", { class: "msg answer" }, el("div", { class: "role" }, "answer"), el("pre", { class: "answer-text" }, call.answer)),
    ...(call.tool_calls || []).map((tc) => el("div", { class: "msg tool" }, el("div", { class: "role" }, "tool call"), el("pre", {}, JSON.stringify(tc, null, 2)))));
}

function turnItem(turn) {
  const who = el("span", { class: "who", style: turn.role === "module" ? "color:" + slotColor(turn.sender) : "" }, turn.sender);
  const head = el("div", { class: "turn-head" }, who,
    turn.model ? el("span", { class: "model" }, turn.model) : null,
    el("span", { class: "type" }, turn.type),
    turn.fields && turn.fields.valid === false ? el("span", { class: "badge neg" }, "invalid") : null,
    turn.type === "Feedback" && turn.fields && turn.fields.done ? el("span", { class: "badge " + (turn.fields.success ? "pos" : "neg") }, turn.fields.success ? "solved" : "done") : null);
  const fields = Object.assign({}, turn.fields);
  if (turn.type === "Feedback") for (const k of ["done", "success", "valid", "needs_reflection", "data"]) delete fields[k];
  if (turn.type === "ActionProposed") { delete fields.valid; if (!fields.parse_error) delete fields.parse_error; }
  if (turn.type === "TaskStarted") delete fields.info;
  const text = turn.text ? el(turn.type === "ActionProposed" ? "pre" : "div", { class: "turn-text" }, turn.text) : null;
  return el("li", { class: "turn role-" + turn.role + " type-" + turn.type, "data-type": turn.type, "data-sender": turn.sender,
    style: turn.role === "module" ? "border-left-color:" + slotColor(turn.sender) : "" },
    head, text, fieldList(fields), ...(turn.calls || []).map(callBlock));
}

// a user's agent's answer, the expected answer and the verdict, before anything else
function answerBlock(v) {
  if (v.verdict === undefined || v.verdict === null) return null;
  const show = (x) => (x === undefined || x === null ? "(none)" : short(x, 300));
  return el("dl", { class: "answer-first" },
    el("dt", {}, "answer"), el("dd", { class: "agent-answer" }, show(v.answer)),
    el("dt", {}, "expected"), el("dd", { class: "expected-answer" }, show(v.expected)),
    el("dt", {}, "verdict"), el("dd", { class: "verdict-word " + (v.success ? "pos" : "neg") }, failureLabel(v.verdict)));
}

function verdictBlock(t) {
  const v = t.verdict;
  const details = Object.assign({}, v.details || {});
  for (const k of ["result", "expected", "verdict"]) delete details[k];
  return el("div", { class: "verdict " + (v.success ? "pos" : "neg") }, answerBlock(v),
    el("strong", {}, v.success ? "solved" : "not solved" + (v.failure ? " (" + failureLabel(v.failure) + ")" : "")),
    " \u00b7 reward " + fmt(v.reward, 2) + " \u00b7 " + v.steps + " steps \u00b7 why: " + (v.reason || "-"),
    v.error ? el("div", {}, "error: " + v.error) : null,
    Object.keys(details).length ? el("details", { class: "muted" }, el("summary", {}, "details"), el("pre", {}, JSON.stringify(details, null, 2))) : null);
}

function headBlock(t) {
  return el("div", { class: "trace-head" },
    el("div", {}, "task ", el("strong", {}, t.task_id), t.repeat ? " #" + t.repeat : "", t.env ? " \u00b7 " + t.env : "",
      " \u00b7 coalition ", el("strong", {}, showCoalition(t.coalition)), t.test_model ? " on " + t.test_model : ""),
    el("div", { class: "chips" }, ...t.slots.map((s) => el("span", { class: "chip", style: "border-color:" + slotColor(s) },
      s + ": " + (t.assignment[s] || "?")))));
}

async function showEpisode(id) {
  openDetail("trace-panel");
  $("trace-id").textContent = id;
  $("trace").replaceChildren();
  $("trace-outcome").replaceChildren();
  try {
    const t = await getJSON("api/transcript/" + encodeURIComponent(id));
    knownSlots = t.slots || [];
    $("trace-outcome").replaceChildren(headBlock(t), verdictBlock(t));
    if (!t.traced) $("trace").appendChild(el("li", {}, "no message trace stored for this episode (the run used --no-trace)"));
    if (t.blame) $("trace-outcome").appendChild(blameNote(t.blame));
    let step = null;
    const ranks = {};  // calls seen per module: the decisive one is its blame.rank-th
    for (const turn of t.turns) {
      if (turn.step !== step) { step = turn.step; $("trace").appendChild(el("li", { class: "step-mark" }, (t.unit || "step") + " " + step)); }
      const item = turnItem(turn);
      const seen = ranks[turn.sender] || 0;
      ranks[turn.sender] = seen + (turn.calls || []).length;
      const b = t.blame;
      if (b && b.status === "decisive" && b.slot === turn.sender && b.rank >= seen && b.rank < ranks[turn.sender]) {
        item.classList.add("decisive");
        item.prepend(el("span", { class: "badge neg", title: "repairing this call with " + b.repair + " flips the outcome" }, "decisive call"));
      }
      $("trace").appendChild(item);
    }
    const same = await getJSON("api/same-task/" + encodeURIComponent(id));
    const others = (same.rows || []).filter((r) => r.episode_id !== id);
    $("diff-with").replaceChildren(...others.map((r) => el("option", { value: r.episode_id },
      showCoalition(r.coalition) + " (" + (r.success ? "solved" : "not solved") + ")")));
    $("diff-tools").hidden = !others.length;
  } catch (err) {
    $("trace-outcome").textContent = String(err);
  }
}

// One numbering for calls everywhere (console, blame.md, here): "model call N", counted from 0
// in the order the calls started; environment rounds are named by the run's own unit.
function blameNote(b) {
  const what = b.outcome === "success" ? "success" : "failure";
  const rates = b.repair_rate == null ? "" : "; flip rate repaired " + b.repair_rate.toFixed(2) + " vs placebo " + b.placebo_rate.toFixed(2);
  const text = b.status === "decisive"
    ? "decisive call of this " + what + ": model call " + b.step + " (counted from 0), " + b.slot + "'s call number " + b.rank + " (counted from 0); answered by " + b.repair + " the outcome changes" + rates
    : b.status === "none" ? "no single call decides this " + what + ": repairing any one with " + b.repair + " moves the outcome no more than a placebo"
      : "not replayable: " + (b.reason || "the prefix did not reproduce");
  return el("p", { class: "blame-note" }, text + " (" + b.replays + " replays)");
}

// Blamed failures and successes apart, by module (api/blame, from blame.jsonl); hidden when the run was not blamed.
async function showBlame() {
  let sides = {};
  try { sides = await getJSON("api/blame"); } catch (err) { return; }
  const rows = [];
  for (const side of ["failures", "successes"]) {
    const groups = sides[side] || {};
    const keys = Object.keys(groups);
    if (!keys.length) continue;
    rows.push(el("h3", {}, side === "failures" ? "Failures (which call broke them)" : "Successes (which call, answered by the default model, breaks them)"));
    rows.push(...keys.map((k) => el("p", {}, el("strong", {}, k + " (" + groups[k].length + "): "),
      ...groups[k].map((id) => el("a", { href: "#episode=" + encodeURIComponent(id), class: "blame-ep" }, id.split("|")[2] || id)))));
  }
  $("blame-panel").hidden = !rows.length;
  $("blame-list").replaceChildren(...rows);
}

// ---- two coalitions on one task, by step -----------------------------------
function compactTurn(turn) {
  return el("div", { class: "cturn role-" + turn.role, style: turn.role === "module" ? "border-left-color:" + slotColor(turn.sender) : "" },
    el("span", { class: "who" }, turn.sender + (turn.model ? " (" + turn.model + ")" : "")), " ",
    el("span", { class: "type" }, turn.type), el("div", { class: "turn-text" }, short(turn.text || JSON.stringify(turn.fields), 600)));
}

async function showDiff(a, b) {
  openDetail("diff-panel");
  const body = $("diff-table").tBodies[0];
  body.replaceChildren();
  $("diff-summary").textContent = "";
  try {
    const d = await getJSON("api/diff?a=" + encodeURIComponent(a) + "&b=" + encodeURIComponent(b));
    knownSlots = d.a.slots || [];
    const side = (s) => showCoalition(s.coalition) + " \u2014 " + (s.verdict.success ? "solved" : "not solved") +
      ", reward " + fmt(s.verdict.reward, 2);
    $("diff-a").textContent = "A: " + side(d.a);
    $("diff-b").textContent = "B: " + side(d.b);
    $("diff-summary").textContent = "task " + d.a.task_id + "; slots on different models: " +
      (d.slots_differ.join(", ") || "none") + "; " + (d.first_divergent_step === null
        ? "the two episodes did the same thing at every step"
        : "first divergent " + (d.unit || "step") + ": " + d.first_divergent_step) + (d.notes.length ? " (" + d.notes.join("; ") + ")" : "");
    for (const row of d.steps) {
      const first = row.step === d.first_divergent_step;
      body.appendChild(el("tr", { class: (row.same ? "same" : "differs") + (first ? " diverge" : ""), "data-step": row.step,
        "data-first": first ? "true" : null },
        el("td", { class: "step" }, (d.unit === "call" ? "call " : "") + String(row.step), first ? el("div", { class: "badge neg" }, "diverges") : null),
        el("td", {}, ...row.a.map(compactTurn)), el("td", {}, ...row.b.map(compactTurn))));
    }
  } catch (err) {
    $("diff-summary").textContent = String(err);
  }
}

async function diffPair() {
  const q = new URLSearchParams({ task: $("pair-task").value, repeat: "0", model: $("pair-model").value || "",
    a: $("pair-a").value, b: $("pair-b").value });
  try {
    const d = await getJSON("api/diff?" + q.toString());
    location.hash = "diff=" + encodeURIComponent(d.a.episode_id) + "&b=" + encodeURIComponent(d.b.episode_id);
  } catch (err) {
    $("pair-note").textContent = "no episode of that task for one of the coalitions";
  }
}

// ---- routing -----------------------------------------------------------------
const DETAILS = ["trace-panel", "diff-panel", "flips-panel"];
function openDetail(id) {
  for (const d of DETAILS) $(d).hidden = d !== id;
  document.body.classList.add("detail-mode");
  window.scrollTo(0, 0);
  return $(id);
}

function route() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.has("episode")) return showEpisode(h.get("episode"));
  if (h.has("diff")) return showDiff(h.get("diff"), h.get("b"));
  if (h.has("flips")) return showFlips(h.get("flips"));
  for (const d of DETAILS) $(d).hidden = true;
  document.body.classList.remove("detail-mode");
}

function wireViews() {
  filtersFromAddress();
  // a filter or page change is a history entry; typing a task id updates its entry in place
  let typed = false;
  const changed = (push) => { filtersFromControls(); list.offset = 0; filtersToAddress(push); refreshEpisodes(); };
  for (const id of ["f-coalition", "f-model", "f-outcome", "f-failure"]) {
    $(id).addEventListener("change", () => { typed = false; changed(true); });
  }
  let typing = null;
  $("f-task").addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => { changed(!typed); typed = true; }, 250);
  });
  const turn = (offset) => { typed = false; list.offset = offset; filtersToAddress(true); refreshEpisodes(); };
  $("page-prev").addEventListener("click", () => turn(Math.max(0, list.offset - PAGE)));
  $("page-next").addEventListener("click", () => turn(list.offset + PAGE));
  window.addEventListener("popstate", () => {
    if (location.search === listedSearch) return;  // only the hash moved: route() follows it
    typed = false;
    filtersFromAddress();
    refreshEpisodes();
  });
  $("pair-b").addEventListener("change", () => { $("pair-b").dataset.touched = "1"; });
  $("pair-go").addEventListener("click", diffPair);
  $("diff-go").addEventListener("click", () => {
    const a = $("trace-id").textContent, b = $("diff-with").value;
    if (b) location.hash = "diff=" + encodeURIComponent(a) + "&b=" + encodeURIComponent(b);
  });
  for (const id of ["trace-close", "diff-close", "flips-close"]) {
    $(id).addEventListener("click", () => { window.history.replaceState(null, "", location.pathname + location.search); route(); });
  }
}

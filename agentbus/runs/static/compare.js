// agentbus run comparison: per slot and per coalition, each run's value and the
// paired difference over shared tasks, from api/compare?a=I&b=J. A figure that
// cannot be computed shows why instead of a number.
"use strict";

const token = new URLSearchParams(location.search).get("token");
const withToken = (p) => (token ? p + (p.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token) : p);
const $ = (id) => document.getElementById(id);
// a signed figure (phi, a difference) or a plain one (a mean reward); never "-0.000"
function num(x, signed = true) {
  if (typeof x !== "number" || !Number.isFinite(x)) return "n/a";
  const v = Math.abs(x) < 5e-4 ? 0 : x;
  return (signed && v >= 0 ? "+" : "") + v.toFixed(3);
}

async function getJSON(path) {
  const resp = await fetch(withToken(path), { cache: "no-store" });
  if (!resp.ok) throw new Error(path + ": HTTP " + resp.status);
  return resp.json();
}

function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
}

function table(title, rows, key, names) {
  const t = document.createElement("table");
  t.className = "cmp";
  t.dataset.kind = key;
  const head = document.createElement("tr");
  for (const h of [title, "A: " + names[0], "B: " + names[1], "A \u2212 B", "95% paired interval"]) {
    const th = document.createElement("th"); th.textContent = h; head.appendChild(th);
  }
  const thead = document.createElement("thead"); thead.appendChild(head); t.appendChild(thead);
  const body = document.createElement("tbody");
  for (const r of rows) {
    const tr = document.createElement("tr");
    tr.dataset.key = r[key];
    cell(tr, r[key] || "(none)");
    const signed = key === "slot";  // phi has a sign; a coalition's mean reward does not
    cell(tr, num(r.a, signed), "a"); cell(tr, num(r.b, signed), "b");
    const moved = typeof r.low === "number" && (r.low > 0 || r.high < 0);
    cell(tr, num(r.diff), "diff" + (moved ? " moved" : ""));
    cell(tr, typeof r.low === "number" ? "[" + num(r.low) + ", " + num(r.high) + "] over " + r.n + " tasks"
      : "none: " + r.why, "ci");
    body.appendChild(tr);
  }
  t.appendChild(body);
  return t;
}

async function show() {
  const a = $("run-a").value, b = $("run-b").value;
  const c = await getJSON("api/compare?a=" + a + "&b=" + b);
  $("cmp-notes").textContent = (c.notes || []).join("; ");
  const box = $("cmp-models");
  box.replaceChildren();
  for (const m of c.models || []) {
    const h = document.createElement("h2");
    h.textContent = "test model " + (m.model_a === m.model_b ? m.model_a : m.model_a + " vs " + m.model_b) +
      ": " + m.tasks_a + " tasks in A, " + m.tasks_b + " in B, " + m.shared_tasks + " shared";
    box.appendChild(h);
    for (const n of m.notes || []) { const p = document.createElement("p"); p.className = "muted"; p.textContent = n; box.appendChild(p); }
    if (m.slots.length) box.appendChild(table("slot (phi)", m.slots, "slot", [c.run_a, c.run_b]));
    const h3 = document.createElement("h3"); h3.textContent = "coalitions (mean reward)"; box.appendChild(h3);
    box.appendChild(table("coalition", m.coalitions, "coalition", [c.run_a, c.run_b]));
  }
  if (!(c.models || []).length) box.textContent = "nothing to compare: " + (c.notes || []).join("; ");
}

async function main() {
  const runs = await getJSON("api/runs");
  for (const [id, pick] of [["run-a", 0], ["run-b", 1]]) {
    const sel = $(id);
    for (const r of runs) {
      const o = document.createElement("option"); o.value = String(r.index); o.textContent = r.name; sel.appendChild(o);
    }
    sel.value = String(Math.min(pick, runs.length - 1));
    sel.addEventListener("change", show);
  }
  $("run-links").replaceChildren(...runs.map((r) => {
    const li = document.createElement("li"); const a = document.createElement("a");
    a.href = withToken("runs/" + r.index + "/"); a.textContent = r.name + " \u2014 dashboard, episodes, transcripts";
    li.appendChild(a); li.appendChild(document.createTextNode(" (" + r.path + ")")); return li;
  }));
  await show();
}

main();

// agentbus dashboard: the cost (spent, projected, billed), the --pareto front and
// the --vary variants.
//
// Loaded before app.js and sharing its globals ($, withToken, state, fmt, isNum,
// runModels); app.js's main() starts watchCost and watchVariants, its render()
// calls renderCost.
"use strict";

// ---- cost: what the run spent, its projection, and the --pareto front -------
// The projection and the front come on their own stream, from the start of the
// log and filtered to the two types, so a page opened late still shows them
// (each is published once or twice). What was spent comes with the status:
// the episodes' records while the run goes on, the bill once it has finished.
const usd = (x) => (isNum(x) ? "$" + (Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(3)) : "-");
function ci(row, f) {
  if (!row || !isNum(row.mean)) return "n/a";
  return isNum(row.ci_low) ? f(row.mean) + " [" + f(row.ci_low) + ", " + f(row.ci_high) + "]" : f(row.mean);
}
let projection = null;  // the run's cost.estimate event, once announced
const simulatedRun = () => runModels.length > 0 && runModels.every((m) => String(m).startsWith("sim:"));

// the console's "cost:" line: what was spent, in calls, tokens and (where priced) dollars
function spentText(s, priced, simulated) {
  const sent = (s.sent_calls || 0).toLocaleString() + " calls sent, " + (s.sent_tokens || 0).toLocaleString() + " tokens";
  if (!priced || !isNum(s.usd)) return "no price for these models (" + sent + "); add them under [prices] for dollars";
  const money = usd(s.usd) + (simulated ? " at simulated list prices (nothing billed)" : " billed");
  const own = isNum(s.agent_usd) ? "; the agents' own cost " + usd(s.agent_usd) : "";
  const missing = (s.unpriced || []).length ? "; no price for " + s.unpriced.join(", ") : "";
  return money + "; " + sent + own + missing;
}

function projectionText(ev) {
  const range = isNum(ev.usd_low) ? " [" + usd(ev.usd_low) + ", " + usd(ev.usd_high) + "]" : "";
  const priced = simulatedRun() ? " at list prices (simulated models: nothing is billed), " : " at list prices, ";
  return "whole run, projected: " + usd(ev.usd) + range + priced +
    Math.round(ev.tokens).toLocaleString() + " tokens sent (" + Math.round(100 * ev.confidence) +
    "% interval, from the first " + ev.blocks + " of " + ev.of + " task blocks)";
}

// A finished run: its bill (results.json's, the console's cost line), not the early
// projection. Before results.json is written, or for a log cut short, what the ended
// episodes' records spent, said as such. A live run: spent so far, and the projection.
function renderCost() {
  if (!state) return;
  const spent = state.spent || {};
  const bill = state.bill;
  const over = state.finished || state.readOnly;
  const lines = [];
  if (state.finished && bill) {
    lines.push("bill: " + spentText(bill, bill.priced, bill.simulated));
  } else {
    const what = state.finished ? "spent, by the episodes' records (the bill, which also counts calls of episodes cut short, is the one in results.json): "
      : over ? "spent before the run was cut short (the episodes that ended): " : "spent so far: ";
    if ((spent.sent_tokens || 0) > 0) lines.push(what + spentText(spent, isNum(spent.usd), simulatedRun()));
    if (!over && projection) lines.push(projectionText(projection));
  }
  if (!lines.length) return;
  $("cost-panel").hidden = false;
  $("cost-estimate").textContent = lines.join("\n");
  $("cost-estimate").dataset.kind = state.finished && bill ? "bill" : over ? "spent" : "live";
}

function showCost(ev) {
  $("cost-panel").hidden = false;
  if (ev.type === "cost.estimate") {
    projection = ev;
    renderCost();
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

// agentbus dashboard: the episode list's filters and page, kept in the address.
//
// Loaded after views.js and sharing its globals ($, list, PAGE, EMPTY_LABEL); views.js
// reads the filters (filters()) for each page it fetches and wires the controls.
// The query keeps them beside the token (?outcome=failure&coalition=(none)&page=2), so a
// reload or a shared link shows the same list, and back and forward step through them;
// the hash stays the open view's (#episode=ID, ...).
"use strict";

const FILTERS = [["f-task", "task"], ["f-coalition", "coalition"], ["f-model", "model"],
  ["f-outcome", "outcome"], ["f-failure", "failure"]];
// The list's filters: read from the controls when one changes, from the address on load
// and on back/forward. A menu's options arrive with the facets, after the address is read,
// so the filters live here and the menus are set from them (fillSelect).
let wanted = new Map();
let listedSearch = null;

function filters() {
  const q = new URLSearchParams();
  for (const [key, v] of wanted) q.set(key, v);
  return q;
}

function filtersFromControls() {
  wanted = new Map();
  for (const [id, key] of FILTERS) {
    const v = $(id).value;
    // "" is the empty coalition in the coalition menu ("*" is any), "any" elsewhere
    if (id === "f-coalition" ? v !== "*" : v !== "") wanted.set(key, v);
  }
}

function filtersFromAddress() {
  const q = new URLSearchParams(location.search);
  wanted = new Map();
  for (const [, key] of FILTERS) {
    if (!q.has(key)) continue;
    const v = q.get(key);
    wanted.set(key, key === "coalition" && v === EMPTY_LABEL ? "" : v);
  }
  const page = parseInt(q.get("page") || "1", 10);
  list.offset = Number.isFinite(page) && page > 1 ? (page - 1) * PAGE : 0;
  listedSearch = location.search;
  for (const [id, key] of FILTERS) {
    const v = wanted.has(key) ? wanted.get(key) : id === "f-coalition" ? "*" : "";
    const control = $(id);
    if (control.tagName !== "SELECT" || [...control.options].some((o) => o.value === v)) control.value = v;
  }
}

// the filters and page into the address: a new history entry (back undoes it), or in place
function filtersToAddress(push) {
  const q = new URLSearchParams(location.search);
  for (const [, key] of FILTERS) q.delete(key);
  q.delete("page");
  for (const [key, v] of wanted) q.set(key, key === "coalition" && v === "" ? EMPTY_LABEL : v);
  if (list.offset > 0) q.set("page", String(Math.floor(list.offset / PAGE) + 1));
  const search = q.toString() ? "?" + q.toString() : "";
  if (search === location.search) return;
  window.history[push ? "pushState" : "replaceState"](null, "", location.pathname + search + location.hash);
  listedSearch = location.search;
}

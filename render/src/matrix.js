// The matrix page's behaviour: filters (by rule, by verdict, by case id; kept
// in the URL's fragment so a filtered view can be shared or opened directly,
// e.g. matrix.html#verdict=fail,warn&rule=T2) and the detail panel a cell
// opens (also from the fragment: #cell=CASE-ID,COLUMN, the column counted
// from 0). Everything the server sent is shown with textContent, never parsed
// as HTML: responses come from servers under test and may be hostile.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("mcperr-data").textContent);
  var ncols = data.columns.length;
  var form = document.getElementById("filters");
  var ruleSel = document.getElementById("f-rule");
  var text = document.getElementById("f-text");
  var count = document.getElementById("f-count");
  var boxes = Array.prototype.slice.call(form.querySelectorAll("input[name=verdict]"));
  var rows = Array.prototype.slice.call(document.querySelectorAll("#matrix tr.case"));
  var heads = Array.prototype.slice.call(document.querySelectorAll("#matrix tr.rule-head"));

  function decode(s) {
    try { return decodeURIComponent(s); } catch (e) { return s; }
  }

  // The fragment is the whole filter state: what it does not name is reset.
  function readHash() {
    var h = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) h[decode(kv.slice(0, i))] = decode(kv.slice(i + 1));
    });
    ruleSel.value = h.rule !== undefined ? h.rule : "";
    var want = h.verdict !== undefined ? h.verdict.split(",") : null;
    boxes.forEach(function (b) { b.checked = !want || want.indexOf(b.value) >= 0; });
    text.value = h.q !== undefined ? h.q : "";
    return h;
  }

  function writeHash() {
    var parts = [];
    if (ruleSel.value) parts.push("rule=" + encodeURIComponent(ruleSel.value));
    var on = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    if (on.length !== boxes.length) parts.push("verdict=" + on.join(","));
    if (text.value) parts.push("q=" + encodeURIComponent(text.value));
    var h = parts.length ? "#" + parts.join("&") : location.pathname + location.search;
    history.replaceState(null, "", h);
  }

  function apply() {
    var rule = ruleSel.value;
    var q = text.value.toLowerCase();
    var on = {};
    boxes.forEach(function (b) { on[b.value] = b.checked; });
    var shown = 0;
    var groups = {};
    rows.forEach(function (tr) {
      var verdicts = tr.getAttribute("data-verdicts").trim().split(/\s+/);
      var show = (!rule || tr.getAttribute("data-rule") === rule) &&
        (!q || tr.getAttribute("data-case").toLowerCase().indexOf(q) >= 0) &&
        verdicts.some(function (v) { return on[v]; });
      tr.hidden = !show;
      if (show) { shown++; groups[tr.getAttribute("data-rule")] = true; }
    });
    heads.forEach(function (th) { th.hidden = !groups[th.getAttribute("data-rule")]; });
    count.textContent = shown + " of " + rows.length + " cases shown";
    document.body.setAttribute("data-shown", String(shown));
  }

  function block(parent, label, value, pretty) {
    if (value === undefined || value === null || value === "") return;
    var h = document.createElement("h3");
    h.textContent = label;
    var pre = document.createElement("pre");
    pre.textContent = pretty ? JSON.stringify(value, null, 2) : String(value);
    parent.appendChild(h);
    parent.appendChild(pre);
  }

  var panel = document.getElementById("detail");
  var body = document.getElementById("detail-body");
  var current = null;

  function open(td) {
    var d = data.cells[Number(td.getAttribute("data-r")) * ncols + Number(td.getAttribute("data-c"))];
    body.textContent = "";
    var h = document.createElement("h2");
    h.textContent = d.case;
    body.appendChild(h);
    var p = document.createElement("p");
    var badge = document.createElement("span");
    badge.className = "badge v-" + (d.verdict === "n/a" ? "none" : d.verdict);
    badge.textContent = d.verdict + (d.baselined ? " (baselined)" : "");
    p.appendChild(badge);
    p.appendChild(document.createTextNode(" " + d.column + (d.rule ? " · rule " + d.rule : "")));
    body.appendChild(p);
    if (d.title) {
      var t = document.createElement("p");
      t.textContent = d.title;
      body.appendChild(t);
    }
    block(body, "why", d.message, false);
    block(body, "request", d.request, true);
    block(body, "response" + (d.http_status ? " (HTTP " + d.http_status + ")" : ""), d.response, true);
    block(body, "body (no JSON-RPC response in it)", d.body, false);
    block(body, "expected shape", d.expected, true);
    block(body, "spec", d.spec, false);
    block(body, "server", d.target, false);
    if (current) current.classList.remove("open");
    current = td;
    td.classList.add("open");
    panel.hidden = false;
  }

  document.getElementById("matrix").addEventListener("click", function (e) {
    var td = e.target.closest("td.cell");
    if (td) open(td);
  });
  document.getElementById("matrix").addEventListener("keydown", function (e) {
    var td = e.target.closest("td.cell");
    if (td && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); open(td); }
  });
  function close() {
    panel.hidden = true;
    if (current) current.classList.remove("open");
    current = null;
  }
  document.getElementById("close").addEventListener("click", close);
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") close();
  });
  form.addEventListener("input", function () { apply(); writeHash(); });
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  // #cell=CASE-ID,COLUMN (the column counted from 0): a link to one cell
  // that survives rows being added or moved.
  function openFromHash(h) {
    if (!h.cell) return;
    var at = h.cell.lastIndexOf(",");
    var c = h.cell.slice(at + 1);
    var id = h.cell.slice(0, at);
    var tr = rows.filter(function (r) { return r.getAttribute("data-case") === id; })[0];
    var td = tr && tr.querySelector('td.cell[data-c="' + Number(c) + '"]');
    if (td) open(td);
  }
  window.addEventListener("hashchange", function () { var h = readHash(); apply(); openFromHash(h); });
  var initial = readHash();
  apply();
  openFromHash(initial);
  document.body.setAttribute("data-ready", "1");
})();

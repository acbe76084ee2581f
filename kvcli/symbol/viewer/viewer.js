/* kvcli viz HTML viewer. Hand-written, no library, no network access.
 * Reads the JSON block #kvcli-data and the SVG in #graph-svg (drawn by graphviz's dot with
 * node ids v<i> and edge ids e<k>). All model text is inserted with textContent only. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("kvcli-data").textContent);
  var holder = document.getElementById("graph-svg");
  var svg = holder.querySelector("svg");

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // ---- page layout --------------------------------------------------------------------
  var bar = el("div", {id: "bar"});
  bar.appendChild(el("h1", null, data.title));
  var search = el("input", {id: "search", type: "search", placeholder: "Find node by name or op (Enter)"});
  var prev = el("button", {id: "prev", title: "previous match (Shift+Enter)"}, "◀");
  var next = el("button", {id: "next", title: "next match (Enter)"}, "▶");
  var count = el("span", {id: "count"}, "");
  var fit = el("button", {id: "fit"}, "Fit");
  var zin = el("button", {id: "zoomin"}, "+");
  var zout = el("button", {id: "zoomout"}, "−");
  var exSvg = el("button", {id: "export-svg"}, "Export SVG");
  var exPng = el("button", {id: "export-png"}, "Export PNG");
  [search, prev, next, count, fit, zin, zout, exSvg, exPng].forEach(function (x) { bar.appendChild(x); });
  bar.appendChild(el("span", {id: "notes"}, (data.notes || []).join(" · ")));
  var canvas = el("div", {id: "canvas"});
  var side = el("div", {id: "side"});
  var tabs = el("div", {id: "tabs"});
  var tabNode = el("button", {id: "tab-node", "class": "on"}, "Node");
  var tabGroups = el("button", {id: "tab-groups"}, "Groups");
  var tabSummary = el("button", {id: "tab-summary"}, "Summary");
  [tabNode, tabGroups, tabSummary].forEach(function (x) { tabs.appendChild(x); });
  var panel = el("div", {id: "panel"});
  var groupsBox = el("div", {id: "groups", hidden: ""});
  var summaryBox = el("div", {id: "summary", hidden: ""});
  side.appendChild(tabs);
  side.appendChild(el("div", {id: "totals"},
    "Learnable parameters: " + data.summary.params + " · Auxiliary states: " + data.summary.aux));
  [panel, groupsBox, summaryBox].forEach(function (x) { side.appendChild(x); });
  panel.appendChild(el("p", null, "Click a node to see its details."));
  document.body.appendChild(bar);
  document.body.appendChild(canvas);
  document.body.appendChild(side);
  canvas.appendChild(svg);
  holder.remove();

  function showTab(which) {
    panel.hidden = which !== "node"; groupsBox.hidden = which !== "groups"; summaryBox.hidden = which !== "summary";
    tabNode.className = which === "node" ? "on" : ""; tabGroups.className = which === "groups" ? "on" : "";
    tabSummary.className = which === "summary" ? "on" : "";
    if (which === "summary" && !summaryBox.firstChild) buildSummary();
  }
  tabNode.onclick = function () { showTab("node"); };
  tabGroups.onclick = function () { showTab("groups"); };
  tabSummary.onclick = function () { showTab("summary"); };

  // ---- the SVG: ids, pan and zoom --------------------------------------------------------
  var nodeEl = [], edgeEl = [];
  data.draws.forEach(function (_, i) { nodeEl.push(svg.getElementById("v" + i)); });
  svg.querySelectorAll("g.edge").forEach(function (g) { edgeEl[+g.id.slice(1)] = g; });
  var edgeEnds = [];  // [head draw, tail draw] per edge, read from the SVG titles is fragile: use ids
  svg.querySelectorAll("g.edge").forEach(function (g) {
    var t = g.querySelector("title").textContent.split("->");
    edgeEnds[+g.id.slice(1)] = [+t[0].trim().slice(1), +t[1].trim().slice(1)];
  });
  svg.removeAttribute("width"); svg.removeAttribute("height");
  var full = svg.viewBox.baseVal;
  var box = {x: full.x, y: full.y, w: full.width, h: full.height};
  var home = {x: box.x, y: box.y, w: box.w, h: box.h};
  function apply() { svg.setAttribute("viewBox", box.x + " " + box.y + " " + box.w + " " + box.h); }
  function doFit() { box = {x: home.x, y: home.y, w: home.w, h: home.h}; apply(); }
  function zoom(f, cx, cy) {
    if (cx === undefined) { cx = box.x + box.w / 2; cy = box.y + box.h / 2; }
    box.x = cx - (cx - box.x) * f; box.y = cy - (cy - box.y) * f; box.w *= f; box.h *= f; apply();
  }
  function toSvg(evt) {
    var r = svg.getBoundingClientRect();
    var s = Math.max(box.w / r.width, box.h / r.height);  // preserveAspectRatio: meet
    var ox = box.x + box.w / 2 - (r.width * s) / 2, oy = box.y + box.h / 2 - (r.height * s) / 2;
    return {x: ox + (evt.clientX - r.left) * s, y: oy + (evt.clientY - r.top) * s, s: s};
  }
  canvas.addEventListener("wheel", function (evt) {
    evt.preventDefault();
    var p = toSvg(evt);
    zoom(evt.deltaY > 0 ? 1.2 : 1 / 1.2, p.x, p.y);
  }, {passive: false});
  var drag = null;
  canvas.addEventListener("mousedown", function (evt) {
    drag = {x: evt.clientX, y: evt.clientY, bx: box.x, by: box.y, s: toSvg(evt).s, moved: false};
    canvas.classList.add("dragging");
  });
  window.addEventListener("mousemove", function (evt) {
    if (!drag) return;
    var dx = evt.clientX - drag.x, dy = evt.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    box.x = drag.bx - dx * drag.s; box.y = drag.by - dy * drag.s; apply();
  });
  window.addEventListener("mouseup", function () { canvas.classList.remove("dragging"); setTimeout(function () { drag = null; }, 0); });
  fit.onclick = doFit;
  zin.onclick = function () { zoom(1 / 1.5); };
  zout.onclick = function () { zoom(1.5); };
  function centerOn(d) {
    var g = nodeEl[d];
    if (!g) return;
    var b = g.getBBox();
    // the node's box in the root's user space (dot puts a translate on the graph group)
    var m = svg.getScreenCTM().inverse().multiply(g.getScreenCTM());
    var p = svg.createSVGPoint(); p.x = b.x + b.width / 2; p.y = b.y + b.height / 2;
    var c = p.matrixTransform(m);
    var r = svg.getBoundingClientRect();
    var w = Math.min(Math.max(b.width * 8, 700), Math.max(home.w, 700)), h = w * (r.height / r.width);
    box = {x: c.x - w / 2, y: c.y - h / 2, w: w, h: h}; apply();
  }

  // ---- the node panel ---------------------------------------------------------------------
  var selected = -1;
  function row(table, key, value) {
    var tr = el("tr"); tr.appendChild(el("td", null, key)); tr.appendChild(el("td", null, value)); table.appendChild(tr);
  }
  function describe(d) {
    if (selected >= 0 && nodeEl[selected]) nodeEl[selected].classList.remove("selected");
    selected = d;
    if (nodeEl[d]) nodeEl[d].classList.add("selected");
    var draw = data.draws[d];
    panel.textContent = "";
    showTab("node");
    if (!draw.members.length) {  // the label node showing a network output's shape
      panel.appendChild(el("h2", {id: "panel-name"}, draw.name));
      panel.appendChild(el("p", null, "Network output: " + draw.label.split("\n").slice(-1)[0]));
      return;
    }
    var first = data.nodes[draw.members[0]];
    panel.appendChild(el("h2", {id: "panel-name"}, draw.count > 1 ? draw.label.split("\n").slice(0, 2).join(" ") : first.name));
    var t = el("table", {id: "panel-table"});
    row(t, "op", first.op === "null" ? "input (" + (first.role || "input") + ")" : first.op);
    if (draw.count > 1) row(t, "nodes", draw.count + (draw.fold ? " (" + draw.fold + " fold)" : ""));
    if (first.attrs) Object.keys(first.attrs).forEach(function (k) { row(t, k, first.attrs[k]); });
    (first["in"] || []).forEach(function (x, j) { row(t, "input " + j, x[0] + " : " + x[1] + (x[2] ? " " + x[2] : "")); });
    (first.out || []).forEach(function (x, j) { row(t, (first.out.length > 1 ? "output " + j : "output"), x + (first.dtype ? " " + first.dtype : "")); });
    (first.weights || []).forEach(function (x) { row(t, "weight", x[0] + " : " + x[1]); });
    if (first.params !== undefined) {
      row(t, "params", first.params.toLocaleString("en-US")); row(t, "aux", first.aux.toLocaleString("en-US"));
    }
    panel.appendChild(t);
    if (draw.count > 1) {
      panel.appendChild(el("h2", null, "Members (" + draw.count + ")"));
      var ul = el("ul", {id: "panel-members"});
      draw.members.forEach(function (m) { ul.appendChild(el("li", null, data.nodes[m].name + " (" + data.nodes[m].op + ")")); });
      if (draw.count > draw.members.length) ul.appendChild(el("li", null, "… " + (draw.count - draw.members.length) + " more"));
      panel.appendChild(ul);
    }
  }
  nodeEl.forEach(function (g, d) {
    if (!g) return;
    g.addEventListener("click", function () { if (!drag || !drag.moved) describe(d); });
  });

  // ---- search -------------------------------------------------------------------------------
  var hits = [], at = -1;
  function runSearch() {
    hits.forEach(function (d) { if (nodeEl[d]) nodeEl[d].classList.remove("hit", "current"); });
    hits = []; at = -1;
    var q = search.value.trim().toLowerCase();
    if (!q) { count.textContent = ""; return; }
    var seen = {};
    data.nodes.forEach(function (n) {
      if (n.d >= 0 && !seen[n.d] && (n.name.toLowerCase().indexOf(q) >= 0 || n.op.toLowerCase().indexOf(q) >= 0)) {
        seen[n.d] = true; hits.push(n.d);
      }
    });
    hits.sort(function (a, b) { return a - b; });
    hits.forEach(function (d) { if (nodeEl[d]) nodeEl[d].classList.add("hit"); });
    count.textContent = hits.length ? "0/" + hits.length : "no match";
  }
  function step(dir) {
    if (!hits.length) return;
    if (at >= 0 && nodeEl[hits[at]]) nodeEl[hits[at]].classList.remove("current");
    at = (at + dir + hits.length) % hits.length;
    var d = hits[at];
    nodeEl[d].classList.add("current");
    count.textContent = (at + 1) + "/" + hits.length;
    centerOn(d); describe(d);
  }
  var last = null;
  search.addEventListener("keydown", function (evt) {
    if (evt.key === "Enter") {
      if (search.value !== last) { runSearch(); last = search.value; }
      step(evt.shiftKey ? -1 : 1);
    }
  });
  search.addEventListener("input", function () { runSearch(); last = search.value; });
  next.onclick = function () { if (search.value !== last) { runSearch(); last = search.value; } step(1); };
  prev.onclick = function () { if (search.value !== last) { runSearch(); last = search.value; } step(-1); };
  document.addEventListener("keydown", function (evt) {
    if ((evt.ctrlKey || evt.metaKey) && evt.key === "f") { evt.preventDefault(); search.focus(); search.select(); }
  });

  // ---- collapse / expand groups ------------------------------------------------------------------
  var hiddenBy = [];  // per draw node: how many collapsed groups hide it
  var firstText = {};  // representative draw -> its original first label line
  function refreshEdges() {
    edgeEnds.forEach(function (ends, k) {
      if (!edgeEl[k]) return;
      var off = (hiddenBy[ends[0]] || 0) > 0 || (hiddenBy[ends[1]] || 0) > 0;
      edgeEl[k].classList.toggle("kv-hidden", off);
    });
  }
  function setCollapsed(group, on) {
    var rep = group.draws[0];
    group.draws.slice(1).forEach(function (d) {
      hiddenBy[d] = (hiddenBy[d] || 0) + (on ? 1 : -1);
      if (nodeEl[d]) nodeEl[d].classList.toggle("kv-hidden", hiddenBy[d] > 0);
    });
    var g = nodeEl[rep];
    if (g) {
      var text = g.querySelector("text");
      if (on) {
        if (!(rep in firstText)) firstText[rep] = text.textContent;
        text.textContent = group.name + " (×" + group.draws.length + ")";
      } else if (rep in firstText) {
        text.textContent = firstText[rep]; delete firstText[rep];
      }
      g.classList.toggle("kv-collapsed", on);
    }
    refreshEdges();
  }
  groupsBox.appendChild(el("p", null, "Collapse a group to one box (its first member); expand to show it again."));
  data.groups.forEach(function (group, j) {
    var label = el("label");
    var box_ = el("input", {type: "checkbox", "data-group": group.name, id: "group-" + j});
    box_.addEventListener("change", function () { setCollapsed(group, box_.checked); });
    label.appendChild(box_);
    label.appendChild(document.createTextNode(" " + group.name + " (" + group.draws.length + ")"));
    groupsBox.appendChild(label);
  });

  // ---- summary table ----------------------------------------------------------------------
  function buildSummary() {
    var outs = Object.keys(data.summary.outputs).map(function (k) { return k + ": " + data.summary.outputs[k]; });
    summaryBox.appendChild(el("p", null, "Outputs: " + outs.join(", ")));
    var table = el("table", {id: "sumtable"});
    var cols = [["name", "Layer"], ["op", "Op"], ["shape", "Output shape"], ["params", "Params"], ["aux", "Aux"]];
    var head = el("tr");
    var body = el("tbody");
    var order = {key: null, dir: 1};
    function fill() {
      body.textContent = "";
      var rows = data.summary.rows.slice();
      if (order.key) rows.sort(function (a, b) {
        var x = a[order.key], y = b[order.key];
        return (x < y ? -1 : x > y ? 1 : 0) * order.dir;
      });
      var frag = document.createDocumentFragment();
      rows.forEach(function (r) {
        var tr = el("tr");
        cols.forEach(function (c) {
          var v = r[c[0]];
          var text = (c[0] === "params" || c[0] === "aux") ? (v ? v.toLocaleString("en-US") + (c[0] === "params" && r.unknown ? " + ?" : "") : "") : String(v);
          tr.appendChild(el("td", (c[0] === "params" || c[0] === "aux") ? {"class": "num"} : null, text));
        });
        frag.appendChild(tr);
      });
      body.appendChild(frag);
    }
    cols.forEach(function (c) {
      var th = el("th", {"data-key": c[0]}, c[1]);
      th.onclick = function () { order.dir = order.key === c[0] ? -order.dir : (c[0] === "params" || c[0] === "aux" ? -1 : 1); order.key = c[0]; fill(); };
      head.appendChild(th);
    });
    var thead = el("thead"); thead.appendChild(head);
    table.appendChild(thead); table.appendChild(body);
    summaryBox.appendChild(table);
    var tot = el("tfoot"); var tr = el("tr");
    tr.appendChild(el("td", {colspan: "3"}, "Totals"));
    tr.appendChild(el("td", {"class": "num"}, data.summary.params));
    tr.appendChild(el("td", {"class": "num"}, data.summary.aux));
    tot.appendChild(tr); table.appendChild(tot);
    fill();
  }

  // ---- export the current view -------------------------------------------------------------
  function currentSvg() {
    var copy = svg.cloneNode(true);
    copy.querySelectorAll(".kv-hidden").forEach(function (x) { x.remove(); });
    copy.setAttribute("xmlns", "http://www.w3.org/2000/svg");
    copy.setAttribute("width", Math.round(box.w)); copy.setAttribute("height", Math.round(box.h));
    return new XMLSerializer().serializeToString(copy);
  }
  function download(name, blob) {
    var a = document.createElement("a");
    a.download = name; a.href = URL.createObjectURL(blob);
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(function () { URL.revokeObjectURL(a.href); }, 1000);
  }
  exSvg.onclick = function () { download(data.title + ".svg", new Blob([currentSvg()], {type: "image/svg+xml"})); };
  exPng.onclick = function () {
    var img = new Image();
    var url = URL.createObjectURL(new Blob([currentSvg()], {type: "image/svg+xml"}));
    img.onload = function () {
      var c = document.createElement("canvas");
      var scale = Math.min(2, 8000 / Math.max(box.w, box.h));
      c.width = Math.max(1, Math.round(box.w * scale)); c.height = Math.max(1, Math.round(box.h * scale));
      var ctx = c.getContext("2d"); ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, c.width, c.height);
      ctx.drawImage(img, 0, 0, c.width, c.height);
      URL.revokeObjectURL(url);
      c.toBlob(function (b) { download(data.title + ".png", b); }, "image/png");
    };
    img.src = url;
  };

  doFit();
  window.kvcliViewer = {ready: true, describe: describe, collapse: setCollapsed, groups: data.groups, currentSvg: currentSvg};
  document.body.setAttribute("data-ready", "1");
})();

/* kvcli viz HTML viewer. Hand-written; no network access. Reads the JSON block #kvcli-data and
 * the SVG in #graph-svg (drawn by graphviz's dot with node ids v<d> and edge ids e<k>).
 * Expanding a fold (a box standing for many graph nodes) lays the view out again in the page
 * with dagre (bundled, MIT): the fold's members become boxes m<g> (g: graph node index) drawn
 * from data.base, the unfolded drawing. All model text is inserted with textContent only. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("kvcli-data").textContent);
  var holder = document.getElementById("graph-svg");
  var svg = holder.querySelector("svg");

  // Maps keyed by names from the model are read through own(): a weight named "constructor",
  // "toString" or "__proto__" must find its own entry (or none), never Object.prototype's.
  var HAS = Object.prototype.hasOwnProperty;
  function own(map, key) { return map && HAS.call(map, key) ? map[key] : undefined; }

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
  var dirBtn = el("button", {id: "rankdir", title: "switch between a vertical and a horizontal layout"}, "");
  var themeBtn = el("button", {id: "theme", title: "dark or light page (starts as the system setting)"}, "");
  fit.title = "the whole graph (0)"; zin.title = "zoom in (+)"; zout.title = "zoom out (-)";
  search.title = "Find node by name or op (/): Up/Down move through the results, Enter goes to the next, Esc closes";
  var searchWrap = el("span", {id: "search-wrap"});
  var results = el("ul", {id: "results", hidden: "", role: "listbox"});
  searchWrap.appendChild(search); searchWrap.appendChild(results);
  [searchWrap, prev, next, count, fit, zin, zout, dirBtn, themeBtn, exSvg, exPng].forEach(function (x) { bar.appendChild(x); });
  var notesEl = el("span", {id: "notes"}, (data.notes || []).join(" · "));
  bar.appendChild(notesEl);
  // Edges run from each consumer back to its inputs (MXNet's dot drawing: inputs at the bottom for
  // TB, on the right for LR). The page shows dot's drawing, or the other orientation laid out by
  // dagre: vertical as dot's TB, horizontal with the inputs on the left (dagre's RL).
  var vertical0 = data.rankdir === "TB" || data.rankdir === "BT";
  var vertical = vertical0;
  function dagreDir() { return vertical === vertical0 ? data.rankdir : vertical ? "TB" : "RL"; }
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
  side.appendChild(el("div", {id: "counts"}, data.counts));
  var P = data.params;  // --params: statistics per tensor, problems by name (absent without it)
  if (P) {
    var check = el("div", {id: "params-check", "class": P.ok && !P.unchecked ? "ok" : "bad"},
      P.ok && !P.unchecked ? "Weights " + P.file + ": all " + P.matched.toLocaleString("en-US") + " match the graph's shapes"
           : "Weights " + P.file + ": " + Object.keys(P.problems).length + " problem(s)" +
             (P.unchecked ? ", " + P.unchecked + " not checked (shapes unknown)" : ""));
    if (!P.ok || P.unchecked) {
      var ul = el("ul");
      P.lines.forEach(function (line) { ul.appendChild(el("li", null, line)); });
      check.appendChild(ul);
    }
    side.appendChild(check);
    if (P.nonfinite_line) {  // NaN or infinity in the weights: said at the top, whatever is selected
      var banner = el("div", {id: "banner", "class": "bad", role: "alert"}, P.nonfinite_line);
      bar.appendChild(banner);
    }
  }
  [panel, groupsBox, summaryBox].forEach(function (x) { side.appendChild(x); });
  panel.appendChild(el("p", null, "Click a node to see its details."));
  document.body.appendChild(bar);
  document.body.appendChild(canvas);
  document.body.appendChild(side);
  canvas.appendChild(svg);
  var mini = el("div", {id: "minimap", title: "overview: click or drag to move the view"});
  var miniImg = el("img", {id: "minimap-img", alt: ""});
  var miniView = el("div", {id: "minimap-view"});
  mini.appendChild(miniImg); mini.appendChild(miniView);
  canvas.appendChild(mini);
  holder.remove();
  var status = el("p", {id: "status"}, "");

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
  var NS = "http://www.w3.org/2000/svg";
  var drawSvg = svg;  // dot's drawing of the folded plan, shown whenever nothing is expanded
  var els = {};  // unit key ("v<d>" draw, "m<g>" member of an expanded fold) -> its <g class="node">
  var edgeEl = [], edgeEnds = [];  // per edge: its <g>, and the draw indices of its two ends
  var box, home;
  var drawOf = data.nodes.map(function (n) { return n.d; });
  var membersOf = data.draws.map(function () { return []; });
  drawOf.forEach(function (d, g) { if (d >= 0) membersOf[d].push(g); });
  function unitDraw(key) { return key.charAt(0) === "v" ? +key.slice(1) : drawOf[+key.slice(1)]; }
  function unitName(key) {  // what a box is called: its node's name, or a fold's "first … last (×N)"
    if (key.charAt(0) === "m") return data.nodes[+key.slice(1)].name;
    var dr = data.draws[+key.slice(1)];
    return dr ? dr.title : key;
  }
  function install(newSvg) {
    if (svg !== newSvg) { canvas.replaceChild(newSvg, svg); svg = newSvg; }
    els = {}; edgeEl = []; edgeEnds = []; selected = null;
    svg.querySelectorAll(".selected, .hit, .current").forEach(function (g) { g.classList.remove("selected", "hit", "current"); });
    // the tooltips (<title>) name nodes as the model does, never by the page's ids (v107, m12)
    svg.querySelectorAll("g.node").forEach(function (g) {
      els[g.id] = g;
      if (!g.querySelector("polygon, ellipse")) g.classList.add("kv-plain");  // an output's shape label
      var title = g.querySelector("title");
      if (title) title.textContent = unitName(g.id);
    });
    svg.querySelectorAll("g.edge").forEach(function (g) {
      var k = +g.id.slice(1);
      edgeEl[k] = g;
      var title = g.querySelector("title");
      if (!g.hasAttribute("data-ends")) {  // dot's "consumer->producer", read once (the title is then replaced)
        g.setAttribute("data-ends", title.textContent.split("->").map(function (x) { return x.trim(); }).join(" "));
        title.textContent = "";
      }
      var t = g.getAttribute("data-ends").split(" ");
      edgeEnds[k] = [unitDraw(t[0]), unitDraw(t[1])];
      title.textContent = unitName(t[1]) + " → " + unitName(t[0]);  // producer → consumer
    });
    svg.removeAttribute("width"); svg.removeAttribute("height");
    var full = svg.viewBox.baseVal;
    box = {x: full.x, y: full.y, w: full.width, h: full.height};
    home = {x: box.x, y: box.y, w: box.w, h: box.h};
    drawMini();
  }
  function apply() { svg.setAttribute("viewBox", box.x + " " + box.y + " " + box.w + " " + box.h); placeMini(); }

  // ---- the overview (minimap): the whole drawing as an image, the view as a rectangle ------------
  var MINI = 180;  // longest side of the overview, in pixels
  var miniUrl = null;
  function drawMini() {
    var k = MINI / Math.max(home.w, home.h);
    // a long thin graph gets a thicker overview, stretched (the view rectangle maps the same way)
    var mw = Math.max(48, Math.round(home.w * k)), mh = Math.max(48, Math.round(home.h * k));
    // serialised with the whole drawing in view, then the live view put back (no layout between)
    var view = svg.getAttribute("viewBox");
    svg.setAttribute("viewBox", home.x + " " + home.y + " " + home.w + " " + home.h);
    svg.setAttribute("width", mw); svg.setAttribute("height", mh);
    svg.setAttribute("preserveAspectRatio", "none");
    if (!svg.getAttribute("xmlns")) svg.setAttribute("xmlns", NS);
    var text = new XMLSerializer().serializeToString(svg);
    svg.removeAttribute("width"); svg.removeAttribute("height"); svg.removeAttribute("preserveAspectRatio");
    if (view) svg.setAttribute("viewBox", view);
    if (miniUrl) URL.revokeObjectURL(miniUrl);
    miniUrl = URL.createObjectURL(new Blob([text], {type: "image/svg+xml"}));
    miniImg.src = miniUrl;
    mini.style.width = mw + "px"; mini.style.height = mh + "px";
    mini.hidden = false;
  }
  function visible() {  // what the canvas really shows of box (preserveAspectRatio: meet)
    var r = svg.getBoundingClientRect();
    if (!r.width || !r.height) return {x: box.x, y: box.y, w: box.w, h: box.h, s: 1};
    var s = Math.max(box.w / r.width, box.h / r.height);
    return {x: box.x + box.w / 2 - (r.width * s) / 2, y: box.y + box.h / 2 - (r.height * s) / 2,
            w: r.width * s, h: r.height * s, s: s};
  }
  function placeMini() {
    if (!home) return;
    var v = visible(), mw = mini.clientWidth, mh = mini.clientHeight;
    var x0 = Math.max(0, (v.x - home.x) / home.w), y0 = Math.max(0, (v.y - home.y) / home.h);
    var x1 = Math.min(1, (v.x + v.w - home.x) / home.w), y1 = Math.min(1, (v.y + v.h - home.y) / home.h);
    miniView.style.left = (x0 * mw) + "px"; miniView.style.top = (y0 * mh) + "px";
    miniView.style.width = Math.max(2, (x1 - x0) * mw) + "px"; miniView.style.height = Math.max(2, (y1 - y0) * mh) + "px";
  }
  function centreAt(x, y) { box.x = x - box.w / 2; box.y = y - box.h / 2; apply(); }
  var miniDrag = false;
  function miniMove(evt) {
    var r = mini.getBoundingClientRect();
    centreAt(home.x + (evt.clientX - r.left) / r.width * home.w, home.y + (evt.clientY - r.top) / r.height * home.h);
  }
  mini.addEventListener("mousedown", function (evt) { evt.stopPropagation(); evt.preventDefault(); miniDrag = true; miniMove(evt); });
  window.addEventListener("mousemove", function (evt) { if (miniDrag) miniMove(evt); });
  window.addEventListener("mouseup", function () { miniDrag = false; });
  mini.addEventListener("click", function (evt) { evt.stopPropagation(); });
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
  var READABLE = 9 / 14;  // least pixels per point: dot's 14-pt labels at 9 px
  var START = 1;  // pixels per point of the first view and of centring when zoomed out: 14 px labels
  function boundsOf(keys) {  // the boxes' extent in the root's user space (dot translates its graph group)
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    var m = svg.getScreenCTM().inverse();
    keys.forEach(function (k) {
      var g = els[k];
      if (!g) return;
      var b = g.getBBox(), t = m.multiply(g.getScreenCTM());
      [[b.x, b.y], [b.x + b.width, b.y + b.height]].forEach(function (c) {
        var p = svg.createSVGPoint(); p.x = c[0]; p.y = c[1]; p = p.matrixTransform(t);
        x0 = Math.min(x0, p.x); y0 = Math.min(y0, p.y); x1 = Math.max(x1, p.x); y1 = Math.max(y1, p.y);
      });
    });
    return x0 > x1 ? null : {x0: x0, y0: y0, x1: x1, y1: y1};
  }
  function scaled(pxPerPt) {  // a box of the canvas's size at this zoom
    var r = svg.getBoundingClientRect();
    return {w: r.width / pxPerPt, h: r.height / pxPerPt};
  }
  function centerOn(key) {  // the node in the middle; zoomed in to readable text if the view was not
    var b = boundsOf([key]);
    if (!b) return;
    var v = visible(), size = 1 / v.s >= READABLE ? {w: v.w, h: v.h} : scaled(START);
    box = {x: (b.x0 + b.x1) / 2 - size.w / 2, y: (b.y0 + b.y1) / 2 - size.h / 2, w: size.w, h: size.h}; apply();
  }
  function startKey() {  // the first input the picture draws (else its first box)
    for (var g = 0; g < data.nodes.length; g++) {
      var n = data.nodes[g];
      if (n.op === "null" && n.d >= 0 && (n.role || "input") === "input") return unitsOf(n.d)[0];
    }
    return unitsOf(0)[0];
  }
  function startView() {  // the whole graph if its text is readable so; else the inputs at 14 px
    var r = svg.getBoundingClientRect();
    if (Math.min(r.width / home.w, r.height / home.h) >= READABLE) { doFit(); return; }
    var b = boundsOf([startKey()]), size = scaled(START);
    if (!b) { doFit(); return; }
    // the input at the edge of the view it sits at in the drawing, the graph beyond it
    var cx = (b.x0 + b.x1) / 2, cy = (b.y0 + b.y1) / 2;
    if (vertical) box = {x: cx - size.w / 2, y: cy > home.y + home.h / 2 ? b.y1 + 24 - size.h : b.y0 - 24, w: size.w, h: size.h};
    else box = {x: cx > home.x + home.w / 2 ? b.x1 + 24 - size.w : b.x0 - 24, y: cy - size.h / 2, w: size.w, h: size.h};
    apply();
  }

  var MAX_FIT = 2600;  // widest view (in points) that fitTo shows: ~20 boxes side by side stay legible
  function fitTo(keys) {  // the view just holding these boxes (an expanded fold's members)
    var b = boundsOf(keys);
    if (!b) return;
    var x0 = b.x0, y0 = b.y0, x1 = b.x1, y1 = b.y1;
    var w = Math.max(x1 - x0 + 80, 600), h = Math.max(y1 - y0 + 80, 400);
    if (Math.max(w, h) > MAX_FIT) { centerOn(keys[0]); return; }  // too small to read: start at the first
    box = {x: (x0 + x1) / 2 - w / 2, y: (y0 + y1) / 2 - h / 2, w: w, h: h}; apply();
  }

  // ---- the node panel ---------------------------------------------------------------------
  var selected = null;  // unit key
  function row(table, key, value) {
    var tr = el("tr"); tr.appendChild(el("td", null, key)); tr.appendChild(el("td", null, value)); table.appendChild(tr);
  }
  function button(id, text, action) {
    var b = el("button", {id: id}, text);
    b.onclick = action;
    panel.appendChild(b);
  }
  function nodeTable(first, draw) {
    var t = el("table", {id: "panel-table"});
    row(t, "op", first.op === "null" ? "input (" + (first.role || "input") + ")" : first.op);
    if (first.attrs) Object.keys(first.attrs).forEach(function (k) { row(t, k, first.attrs[k]); });
    (first["in"] || []).forEach(function (x, j) { row(t, "input " + j, x[0] + " : " + x[1] + (x[2] ? " " + x[2] : "")); });
    (first.out || []).forEach(function (x, j) { row(t, (first.out.length > 1 ? "output " + j : "output"), x + (first.dtype ? " " + first.dtype : "")); });
    (first.weights || []).forEach(function (x) { row(t, "weight", x[0] + " : " + x[1]); });
    if (first.params !== undefined) {
      var shared = 0, owners = Object.create(null);
      (first.shared || []).forEach(function (x) { shared += x[1] || 0; owners[x[2]] = true; });
      var where = Object.keys(owners).join(", ");
      if (first.shared) {  // weights shared with earlier nodes: counted there, shown here
        row(t, "params", (first.params ? first.params.toLocaleString("en-US") + " + " : "") +
            shared.toLocaleString("en-US") + " shared with " + where + " (counted there)");
        first.shared.forEach(function (x) { row(t, "shared", x[0] + (x[1] === null ? "" : " (" + x[1].toLocaleString("en-US") + ")")); });
      } else {
        row(t, "params", first.params.toLocaleString("en-US"));
      }
      row(t, "aux", first.aux.toLocaleString("en-US"));
    }
    panel.appendChild(t);
    if (!P) return;
    var names = first.op === "null" ? [first.name] : (first.weights || []).map(function (x) { return x[0]; });
    names.forEach(function (name) { if (own(P.tensors, name) || own(P.problems, name)) panel.appendChild(tensorBox(name)); });
  }
  function n(x) { return x.toLocaleString("en-US"); }
  var HOW = {repeat: "repeated blocks folded", pattern: "grouped by --collapse", depth: "grouped by name prefix"};
  function amount(part, members) {  // params or aux of a box: per member and in all, shared said so
    var each = part.each[0] === part.each[1] ? n(part.each[0]) : n(part.each[0]) + "–" + n(part.each[1]);
    if (!part.total && !part.unknown) return "0";
    var text = each + " per member; " + (part.unknown ? "at least " : "") + n(part.total) + " in all";
    return part.shared ? text + " (members share weights: each counted once)" : text;
  }
  function foldTable(draw) {  // what a box standing for many nodes holds, over all its members
    var b = draw.box, t = el("table", {id: "panel-table"}), ops = Object.keys(b.ops);
    row(t, "op", ops.length === 1 ? ops[0] : ops.map(function (k) { return k + " ×" + n(b.ops[k]); }).join(", "));
    row(t, "members", n(b.members) + (draw.fold ? " (" + (HOW[draw.fold] || draw.fold) + ")" : ""));
    Object.keys(b.attrs).forEach(function (k) {
      var v = b.attrs[k];
      row(t, k, typeof v === "string" ? v : v.top.map(function (x) { return x[0] + " ×" + n(x[1]); }).join(", ") +
        (v.values > v.top.length ? ", … (" + v.values + " values)" : "") + (v.without ? "; " + n(v.without) + " without it" : ""));
    });
    if (b.out.kinds) row(t, "output", b.out.kinds === 1 ? b.out.first : b.out.first + " … " + b.out.last + " (" + b.out.kinds + " shapes)");
    row(t, "params", amount(b.params));
    row(t, "aux", amount(b.aux));
    panel.appendChild(t);
  }
  function fmt(x) {
    if (x === null || x === undefined) return "–";
    var a = Math.abs(x);
    return a !== 0 && (a < 1e-3 || a >= 1e5) ? x.toExponential(3) : String(+x.toPrecision(5));
  }
  function tensorBox(name) {  // one tensor of --params: check, shape, dtype, statistics, histogram, first values
    var st = own(P.tensors, name), box_ = el("div", {"class": "tensor", "data-name": name});
    box_.appendChild(el("h3", null, name));
    if (own(P.problems, name)) box_.appendChild(el("p", {"class": "problem"}, own(P.problems, name)));
    var bad = own(P.nonfinite, name);
    if (bad && st) box_.appendChild(el("p", {"class": "problem nonfinite"}, bad.toLocaleString("en-US") + " of " +
      st.size.toLocaleString("en-US") + " values are NaN or infinity (the statistics are of the finite values)"));
    if (!st) return box_;
    var t = el("table", {"class": "stats"});
    row(t, "shape", st.shape + " " + st.dtype);
    if (st.min !== undefined) {
      row(t, "min / max", fmt(st.min) + " / " + fmt(st.max));
      row(t, "mean / std", fmt(st.mean) + " / " + fmt(st.std));
    }
    if (st.zeros !== undefined) row(t, "zeros", (st.zeros * 100).toFixed(st.zeros > 0 && st.zeros < 0.001 ? 3 : 1) + " %");
    if (st.nonfinite) row(t, "NaN / inf", st.nonfinite.toLocaleString("en-US"));
    row(t, "first", st.first.map(fmt).join(", ") + (st.size > st.first.length ? ", …" : ""));
    box_.appendChild(t);
    if (st.hist) box_.appendChild(histogram(st));
    return box_;
  }
  function histogram(st) {
    var W = 300, H = 56, n = st.hist.length, top = Math.max.apply(null, st.hist) || 1;
    var h = document.createElementNS(NS, "svg");
    h.setAttribute("class", "hist"); h.setAttribute("viewBox", "0 0 " + W + " " + (H + 14));
    h.setAttribute("width", W); h.setAttribute("height", H + 14);
    st.hist.forEach(function (c, i) {
      var bh = c ? Math.max(1, c / top * H) : 0;
      h.appendChild(svgEl("rect", {x: i * W / n + 0.5, y: H - bh, width: Math.max(1, W / n - 1), height: bh, "class": "bar"}));
    });
    h.appendChild(svgEl("text", {x: 0, y: H + 12, "font-size": 10, "class": "axis"}, fmt(st.min)));
    h.appendChild(svgEl("text", {x: W, y: H + 12, "font-size": 10, "text-anchor": "end", "class": "axis"}, fmt(st.max)));
    return h;
  }
  function select(key) {
    if (selected && els[selected]) els[selected].classList.remove("selected");
    selected = key;
    if (els[key]) els[key].classList.add("selected");
    panel.textContent = "";
    showTab("node");
    var d = unitDraw(key), draw = data.draws[d];
    if (key.charAt(0) === "m") setHash(data.nodes[+key.slice(1)].name);
    else setHash(draw && draw.count === 1 ? data.nodes[draw.members[0]].name : null);
  }
  function unselect() {  // Esc: nothing selected, no result list, the address without #node=
    if (selected && els[selected]) els[selected].classList.remove("selected");
    selected = null;
    results.hidden = true;
    panel.textContent = "";
    panel.appendChild(el("p", null, "Click a node to see its details."));
    setHash(null);
  }
  function describe(key) {
    if (typeof key === "number") key = "v" + key;
    select(key);
    status.textContent = "";
    if (key.charAt(0) === "m") {  // one member of an expanded fold
      var g = +key.slice(1), d = drawOf[g];
      panel.appendChild(el("h2", {id: "panel-name"}, data.nodes[g].name));
      nodeTable(data.nodes[g], null);
      panel.appendChild(el("p", null, "Member of the expanded fold " + data.draws[d].title));
      button("fold-back", "Fold back", function () { setExpanded(d, false); });
      return;
    }
    var d = +key.slice(1), draw = data.draws[d];
    if (!draw.members.length) {  // the label node showing a network output's shape
      panel.appendChild(el("h2", {id: "panel-name"}, draw.name));
      panel.appendChild(el("p", null, "Network output: " + draw.label.split("\n").slice(-1)[0]));
      return;
    }
    var first = data.nodes[draw.members[0]];
    panel.appendChild(el("h2", {id: "panel-name"}, draw.count > 1 ? draw.title : first.name));
    if (draw.count > 1) {
      button("expand", "Expand in place (×" + draw.count.toLocaleString("en-US") + ")", function () { setExpanded(d, true); });
      panel.appendChild(status);
      foldTable(draw);
    } else {
      nodeTable(first, draw);
    }
    if (draw.count > 1) {
      panel.appendChild(el("h2", null, "Members (" + draw.count + ")"));
      var ul = el("ul", {id: "panel-members"});
      draw.members.forEach(function (m) { ul.appendChild(el("li", null, data.nodes[m].name + " (" + data.nodes[m].op + ")")); });
      if (draw.count > draw.members.length) ul.appendChild(el("li", null, "… " + (draw.count - draw.members.length) + " more"));
      panel.appendChild(ul);
    }
  }
  function unitAt(evt) {
    var g = evt.target.closest ? evt.target.closest("g.node") : null;
    return g && els[g.id] === g ? g.id : null;
  }
  canvas.addEventListener("click", function (evt) {
    var key = unitAt(evt);
    if (key && (!drag || !drag.moved)) describe(key);
  });
  canvas.addEventListener("dblclick", function (evt) {  // a fold opens, a member folds back
    var key = unitAt(evt);
    if (!key) return;
    var d = unitDraw(key);
    if (key.charAt(0) === "m") setExpanded(d, false);
    else if (data.draws[d].count > 1) setExpanded(d, true);
  });

  // ---- search: a list of the graph nodes found (name, op, shape) --------------------------------
  var MAX_LISTED = 100;  // rows of the result list shown at a time (Up/Down scroll through all)
  var found = [], hits = [], at = -1, shownAt = -1;  // found: graph indices; hits: the boxes lit
  function unitOf(g) { var d = drawOf[g]; return expanded[d] ? "m" + g : "v" + d; }
  function clearHits() {
    hits.forEach(function (k) { if (els[k]) els[k].classList.remove("hit", "current"); });
    hits = [];
  }
  function runSearch(keep) {  // keep: the list is the same (a relayout), so is the position in it
    clearHits();
    if (!keep) { at = -1; shownAt = -1; }
    var q = search.value.trim().toLowerCase();
    found = [];
    if (q) {
      data.nodes.forEach(function (n, g) {
        if (n.d >= 0 && (n.name.toLowerCase().indexOf(q) >= 0 || n.op.toLowerCase().indexOf(q) >= 0)) found.push(g);
      });
      found.sort(function (a, b) { return drawOf[a] - drawOf[b] || a - b; });
      var seen = {};
      found.forEach(function (g) { var k = unitOf(g); if (!seen[k]) { seen[k] = true; hits.push(k); } });
      hits.forEach(function (k) { if (els[k]) els[k].classList.add("hit"); });
      if (shownAt >= 0 && els[unitOf(found[shownAt])]) els[unitOf(found[shownAt])].classList.add("current");
    }
    count.textContent = !q ? "" : found.length ? (at + 1) + "/" + found.length : "no match";
    listResults();
  }
  function listResults() {
    results.textContent = "";
    if (!found.length || document.activeElement !== search) { results.hidden = true; return; }
    var start = Math.max(0, Math.min(at - 10, found.length - MAX_LISTED)), end = Math.min(found.length, start + MAX_LISTED);
    var on = null;
    for (var i = start; i < end; i++) {
      var n = data.nodes[found[i]];
      var li = el("li", {"data-i": String(i), role: "option", "class": i === at ? "on" : ""});
      li.appendChild(el("span", {"class": "r-name"}, n.name));
      li.appendChild(el("span", {"class": "r-op"}, n.op === "null" ? "input" : n.op));
      li.appendChild(el("span", {"class": "r-shape"}, (n.out || [""])[0]));
      li.addEventListener("mousedown", function (evt) { evt.preventDefault(); go(+this.getAttribute("data-i")); });
      results.appendChild(li);
      if (i === at) on = li;
    }
    if (start > 0) results.insertBefore(el("li", {"class": "r-more"}, "… " + start.toLocaleString("en-US") + " above"), results.firstChild);
    if (end < found.length) results.appendChild(el("li", {"class": "r-more"}, "… " + (found.length - end).toLocaleString("en-US") + " more"));
    results.hidden = false;
    if (on && on.scrollIntoView) on.scrollIntoView({block: "nearest"});
  }
  function reveal(g) {  // the box showing graph node g: a fold holding it is expanded when the page can
    var d = drawOf[g];
    if (!expanded[d] && membersOf[d].length > 1) setExpanded(d, true, true);
    return unitOf(g);
  }
  function go(i) {  // show result i: select and centre it
    if (!found.length) return;
    at = shownAt = (i + found.length) % found.length;
    var key = reveal(found[at]);
    hits.forEach(function (k) { if (els[k]) els[k].classList.remove("current"); });
    if (els[key]) els[key].classList.add("current");
    count.textContent = (at + 1) + "/" + found.length;
    centerOn(key); describe(key);
    listResults();
  }
  function step(dir) { go(at < 0 ? (dir > 0 ? 0 : found.length - 1) : at + dir); }
  function highlight(dir) {  // Up/Down: move in the list; Enter goes there
    if (!found.length) return;
    at = at < 0 ? (dir > 0 ? 0 : found.length - 1) : (at + dir + found.length) % found.length;
    count.textContent = (at + 1) + "/" + found.length;
    listResults();
  }
  var last = null;
  function fresh() { if (search.value !== last) { runSearch(); last = search.value; } }
  search.addEventListener("keydown", function (evt) {
    if (evt.key === "Enter") {
      evt.preventDefault(); fresh();
      if (at >= 0 && at !== shownAt && !evt.shiftKey) go(at); else step(evt.shiftKey ? -1 : 1);
    } else if (evt.key === "ArrowDown" || evt.key === "ArrowUp") {
      evt.preventDefault(); fresh(); highlight(evt.key === "ArrowDown" ? 1 : -1);
    } else if (evt.key === "Escape") {  // the list closes; the query stays (Chrome would clear it)
      evt.preventDefault(); results.hidden = true; search.blur();
    }
  });
  search.addEventListener("input", function () { runSearch(); last = search.value; });
  search.addEventListener("focus", listResults);
  search.addEventListener("blur", function () { results.hidden = true; });
  next.onclick = function () { fresh(); step(1); };
  prev.onclick = function () { fresh(); step(-1); };

  // ---- keys, the address (#node=NAME), direction and theme ---------------------------------------
  document.addEventListener("keydown", function (evt) {
    if ((evt.ctrlKey || evt.metaKey) && evt.key === "f") { evt.preventDefault(); search.focus(); search.select(); return; }
    if (evt.ctrlKey || evt.metaKey || evt.altKey) return;
    var t = evt.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
    var v = visible(), handled = true;
    switch (evt.key) {
      case "/": search.focus(); search.select(); break;
      case "+": case "=": zoom(1 / 1.25); break;
      case "-": case "_": zoom(1.25); break;
      case "0": doFit(); break;
      case "ArrowLeft": box.x -= v.w * 0.2; apply(); break;
      case "ArrowRight": box.x += v.w * 0.2; apply(); break;
      case "ArrowUp": box.y -= v.h * 0.2; apply(); break;
      case "ArrowDown": box.y += v.h * 0.2; apply(); break;
      case "Escape": unselect(); break;
      default: handled = false;
    }
    if (handled) evt.preventDefault();
  });
  function setHash(name) {  // the address names the selected node (replaced, not a new history entry)
    var url = location.href.split("#")[0] + (name === null ? "" : "#node=" + encodeURIComponent(name));
    if (url === location.href) return;
    try { history.replaceState(null, "", url); } catch (e) { /* a browser that refuses it for file: pages */ }
  }
  function nodeNamed(name) {
    for (var g = 0; g < data.nodes.length; g++) if (data.nodes[g].name === name && data.nodes[g].d >= 0) return g;
    return -1;
  }
  function fromHash() {  // #node=NAME: select and centre that node
    var m = /^#node=(.*)$/.exec(location.hash), name;
    if (!m) return false;
    try { name = decodeURIComponent(m[1]); } catch (e) { return false; }
    var g = nodeNamed(name);
    if (g < 0) { notesEl.textContent = "#node=: no drawn node is named " + name; return false; }
    var key = reveal(g);
    centerOn(key); describe(key);
    return true;
  }
  window.addEventListener("hashchange", fromHash);
  function showDir() { dirBtn.textContent = vertical ? "Vertical" : "Horizontal"; }
  dirBtn.onclick = function () {
    var shown = 0;
    data.draws.forEach(function (dr, j) { shown += expanded[j] ? membersOf[j].length : 1; });
    if (shown > MAX_UNITS) {
      notesEl.textContent = "The page lays out at most " + MAX_UNITS.toLocaleString("en-US") + " boxes itself; this view has " +
        shown.toLocaleString("en-US") + ". Draw the other direction with kvcli viz FILE --rankdir " + (vertical ? "lr" : "tb");
      return;
    }
    var key = selected;
    relayout(function () { vertical = !vertical; }, null, null);
    showDir();
    if (key && els[key]) { centerOn(key); describe(key); } else startView();
  };
  var media = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  var dark = !!(media && media.matches);
  function showTheme() {
    document.documentElement.classList.toggle("dark", dark);
    themeBtn.textContent = dark ? "Light" : "Dark";
  }
  themeBtn.onclick = function () { dark = !dark; showTheme(); };
  if (media && media.addEventListener) media.addEventListener("change", function (e) { dark = e.matches; showTheme(); });

  // ---- collapse / expand groups ------------------------------------------------------------------
  var hiddenBy = [];  // per draw node: how many collapsed groups hide it
  var firstText = {};  // representative unit key -> its original first label line
  var collapsedGroups = [];
  function unitsOf(d) {
    return expanded[d] ? membersOf[d].map(function (g) { return "m" + g; }) : ["v" + d];
  }
  function refreshEdges() {
    edgeEnds.forEach(function (ends, k) {
      if (!edgeEl[k]) return;
      var off = (hiddenBy[ends[0]] || 0) > 0 || (hiddenBy[ends[1]] || 0) > 0;
      edgeEl[k].classList.toggle("kv-hidden", off);
    });
  }
  function setCollapsed(group, on) {
    var i = collapsedGroups.indexOf(group);
    if (on && i < 0) collapsedGroups.push(group);
    if (!on && i >= 0) collapsedGroups.splice(i, 1);
    hideGroup(group, on);
    refreshEdges();
  }
  function hideGroup(group, on) {
    var rep = group.draws[0];
    group.draws.slice(1).forEach(function (d) {
      hiddenBy[d] = (hiddenBy[d] || 0) + (on ? 1 : -1);
      unitsOf(d).forEach(function (k) { if (els[k]) els[k].classList.toggle("kv-hidden", hiddenBy[d] > 0); });
    });
    var key = unitsOf(rep)[0], g = els[key];
    if (g) {  // the representative's whole label becomes the group's (no line of its own name left over)
      var texts = g.querySelectorAll("text");
      if (on) {
        if (!(key in firstText)) firstText[key] = texts[0].textContent;
        texts[0].textContent = group.name + " (×" + group.draws.length + ")";
      } else if (key in firstText) {
        texts[0].textContent = firstText[key]; delete firstText[key];
      }
      for (var i = 1; i < texts.length; i++) texts[i].classList.toggle("kv-hidden", on);
      g.classList.toggle("kv-collapsed", on);
    }
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

  // ---- expand a fold in place: lay the view out again with dagre --------------------------------
  var MAX_UNITS = 1500;  // boxes the page lays out itself; more would take the browser many seconds
  var expanded = {};  // draw index -> true
  var baseOf = {};  // graph index -> [g, label, fill, shape, small]
  data.base.nodes.forEach(function (b) { baseOf[b[0]] = b; });
  var measure = document.createElement("canvas").getContext("2d");
  function textWidth(lines, size) {
    measure.font = size + "px Times, serif";
    var w = 0;
    lines.forEach(function (line) { w = Math.max(w, measure.measureText(line).width); });
    return w;
  }
  function unitSize(u) {  // graphviz's sizes in points: boxes at least 1.3 x 0.8034 in, grown to fit
    var lines = u.label.split("\n"), size = u.small ? 9 : 14, lh = size * 1.2;
    var tw = textWidth(lines, size), th = lines.length * lh;
    if (u.shape === "plaintext") return {w: tw + 16, h: th + 8, lines: lines, size: size};
    if (u.small) return {w: Math.max(28.8, tw * 1.42 + 6), h: Math.max(18, th * 1.42 + 3), lines: lines, size: size};
    if (u.shape === "oval") return {w: Math.max(93.6, tw * 1.42 + 16), h: Math.max(57.85, th * 1.42 + 8), lines: lines, size: size};
    return {w: Math.max(93.6, tw + 23), h: Math.max(57.85, th + 11.5), lines: lines, size: size};
  }
  function viewUnits() {
    var units = [];
    data.draws.forEach(function (dr, d) {
      if (!expanded[d]) {
        units.push({key: "v" + d, label: dr.label, fill: dr.fill, shape: dr.shape, small: dr.small, fold: dr.fold});
        return;
      }
      membersOf[d].forEach(function (g) {
        var b = baseOf[g];
        units.push({key: "m" + g, label: b[1], fill: b[2], shape: b[3], small: b[4]});
      });
    });
    return units;
  }
  function endKey(x) {
    if (x < 0) return "v" + (-x - 1);
    return expanded[drawOf[x]] ? "m" + x : "v" + drawOf[x];
  }
  function viewEdges() {  // the unfolded drawing's edges between the shown boxes, de-duplicated
    var byPair = {}, out = [];
    data.base.edges.forEach(function (e) {
      var h = endKey(e[0]), t = endKey(e[1]);
      if (h === t) return;
      var pair = h + ">" + t, known = byPair[pair];
      if (!known) { byPair[pair] = known = {h: h, t: t, label: data.base.labels[e[2]]}; out.push(known); }
      else if (known.label !== data.base.labels[e[2]]) known.label = "";
    });
    return out;
  }
  function svgEl(tag, attrs, text) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function drawText(parent, lines, cx, cy, size) {
    var lh = size * 1.2, y0 = cy - (lines.length * lh) / 2 + lh * 0.78;
    lines.forEach(function (line, i) {
      parent.appendChild(svgEl("text", {"text-anchor": "middle", x: cx, y: y0 + i * lh,
        "font-family": "Times,serif", "font-size": size}, line));
    });
  }
  function rect(x, y, w, h) {
    return [x - w / 2, y - h / 2, x + w / 2, y - h / 2, x + w / 2, y + h / 2, x - w / 2, y + h / 2, x - w / 2, y - h / 2].join(" ");
  }
  function layoutView() {
    var units = viewUnits(), edges = viewEdges();
    var G = new dagre.graphlib.Graph();
    G.setGraph({rankdir: dagreDir(), nodesep: 18, ranksep: 36, edgesep: 10, marginx: 8, marginy: 8});
    G.setDefaultEdgeLabel(function () { return {}; });
    units.forEach(function (u) { var s = unitSize(u); u.s = s; G.setNode(u.key, {width: s.w, height: s.h}); });
    edges.forEach(function (e) {
      var w = e.label ? textWidth([e.label], 14) : 0;
      G.setEdge(e.h, e.t, {width: w, height: e.label ? 16 : 0, labelpos: "r", labeloffset: 4});
    });
    dagre.layout(G);
    var gr = G.graph();
    var root = svgEl("svg", {xmlns: NS, viewBox: "0 0 " + Math.ceil(gr.width) + " " + Math.ceil(gr.height)});
    var top = svgEl("g", {id: "graph0", "class": "graph"});
    root.appendChild(top);
    edges.forEach(function (e, k) {
      var p = G.edge(e.h, e.t), pts = p.points;
      var g = svgEl("g", {id: "e" + k, "class": "edge"});
      g.appendChild(svgEl("title", {}, e.h + "->" + e.t));
      var dpath = "M" + pts[0].x + "," + pts[0].y;
      for (var i = 1; i < pts.length - 1; i++) {
        var mx = (pts[i].x + pts[i + 1].x) / 2, my = (pts[i].y + pts[i + 1].y) / 2;
        dpath += " Q" + pts[i].x + "," + pts[i].y + " " + (i === pts.length - 2 ? pts[i + 1].x + "," + pts[i + 1].y : mx + "," + my);
      }
      if (pts.length === 2) dpath += " L" + pts[1].x + "," + pts[1].y;
      g.appendChild(svgEl("path", {d: dpath, fill: "none", stroke: "black"}));
      // the arrow at the consumer's end (dot: dir=back, arrowtail=open)
      var ux = pts[0].x - pts[1].x, uy = pts[0].y - pts[1].y, n = Math.sqrt(ux * ux + uy * uy) || 1;
      ux /= n; uy /= n;
      var tip = pts[0], bx = tip.x - 10 * ux, by = tip.y - 10 * uy;
      g.appendChild(svgEl("polygon", {fill: "black", stroke: "black", points: [tip.x, tip.y,
        bx - 3.5 * uy, by + 3.5 * ux, tip.x - 7 * ux, tip.y - 7 * uy, bx + 3.5 * uy, by - 3.5 * ux].join(" ")}));
      if (e.label) g.appendChild(svgEl("text", {"text-anchor": "middle", x: p.x, y: p.y + 4,
        "font-family": "Times,serif", "font-size": 14}, e.label));
      top.appendChild(g);
    });
    units.forEach(function (u) {
      var n = G.node(u.key), s = u.s;
      var g = svgEl("g", {id: u.key, "class": "node"});
      g.appendChild(svgEl("title", {}, u.key));
      if (u.shape === "oval") {
        g.appendChild(svgEl("ellipse", {cx: n.x, cy: n.y, rx: s.w / 2, ry: s.h / 2, fill: u.fill, stroke: "black"}));
      } else if (u.shape !== "plaintext") {
        g.appendChild(svgEl("polygon", {fill: u.fill, stroke: "black", points: rect(n.x, n.y, s.w, s.h)}));
        if (u.fold) g.appendChild(svgEl("polygon", {fill: "none", stroke: "black", points: rect(n.x, n.y, s.w + 8, s.h + 8)}));
      }
      drawText(g, s.lines, n.x, n.y, s.size);
      top.appendChild(g);
    });
    return root;
  }
  function setExpanded(d, on, quiet) {  // quiet: the caller chooses the view and the selection
    if (!!expanded[d] === on) return;
    if (on) {
      var shown = 0;
      data.draws.forEach(function (dr, j) { shown += expanded[j] || j === d ? membersOf[j].length : 1; });
      if (shown > MAX_UNITS) {
        status.textContent = "Expanding this fold would show " + shown.toLocaleString("en-US") + " boxes; the page lays out at most " +
          MAX_UNITS.toLocaleString("en-US") + ". Draw part of the model instead: kvcli viz FILE --focus NODE --radius K -o part.html";
        return;
      }
    }
    relayout(function () { if (on) expanded[d] = true; else delete expanded[d]; },
             quiet ? null : on ? "m" + membersOf[d][0] : "v" + d, on && !quiet ? unitsOf(d) : null);
  }
  function relayout(change, key, zoomIn) {  // apply change(), draw it (dot's picture when nothing is expanded)
    collapsedGroups.forEach(function (group) { hideGroup(group, false); });  // on the old view
    clearHits();
    change();
    install(Object.keys(expanded).length || vertical !== vertical0 ? layoutView() : drawSvg);
    hiddenBy = []; firstText = {};
    collapsedGroups.forEach(function (group) { hideGroup(group, true); });
    refreshEdges();
    if (search.value.trim()) runSearch(true);
    last = search.value;
    foldAll.disabled = !Object.keys(expanded).length;
    doFit();
    if (zoomIn) fitTo(zoomIn);
    if (key) describe(key);
  }
  var foldAll = el("button", {id: "fold-all", disabled: ""}, "Fold all");
  bar.insertBefore(foldAll, exSvg);
  foldAll.onclick = function () {
    if (!Object.keys(expanded).length) return;
    relayout(function () { expanded = {}; }, null, false);
    panel.textContent = "";
  };

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

  install(svg);
  showDir(); showTheme();
  if (!fromHash()) startView();
  window.kvcliViewer = {ready: true, describe: describe, collapse: setCollapsed, groups: data.groups, currentSvg: currentSvg,
                        expand: setExpanded, visible: visible, fit: doFit};
  document.body.setAttribute("data-ready", "1");
})();

/* kvcli viz HTML viewer. Hand-written; no network access. Reads the JSON block #kvcli-data and
 * the SVG in #graph-svg (drawn by graphviz's dot with node ids v<d> and edge ids e<k>).
 * Expanding a fold (a box standing for many graph nodes) lays the view out again in the page
 * with dagre (bundled, MIT): the fold's members become boxes m<g> (g: graph node index) drawn
 * from data.base, the unfolded drawing. All model text is inserted with textContent only.
 *
 * The page's script is these files in this order, inside one function (kvcli.symbol.viewer.SCRIPTS):
 * page.js (data, the page, the SVG, pan and zoom, the overview), panel.js (a node's details and
 * its weights), search.js (search, keys, the address), expand.js (groups, folds expanded in
 * place, direction), table.js (summary, export), cost.js (cost colours, the costliest layers),
 * start.js (the first view). */
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
  var search = el("input", {id: "search", type: "search", placeholder: "Find a node, weight or shape (Enter)"});
  var prev = el("button", {id: "prev", title: "previous match (Shift+Enter)"}, "◀");
  var next = el("button", {id: "next", title: "next match (Enter)"}, "▶");
  var count = el("span", {id: "count"}, "");
  var fit = el("button", {id: "fit"}, "Fit");
  var zin = el("button", {id: "zoomin"}, "+");
  var zout = el("button", {id: "zoomout"}, "−");
  var exSvg = el("button", {id: "export-svg", title: "the whole graph as SVG (as shown: folds expanded or not)"}, "Export SVG");
  var exPng = el("button", {id: "export-png", title: "the whole graph as PNG (as shown: folds expanded or not)"}, "Export PNG");
  var dirBtn = el("button", {id: "rankdir", title: "switch between a vertical and a horizontal layout"}, "");
  var themeBtn = el("button", {id: "theme", title: "dark or light page (starts as the system setting)"}, "");
  fit.title = "the whole graph (0)"; zin.title = "zoom in (+)"; zout.title = "zoom out (-)";
  search.title = "Find operators, weights and tensors by name, op or shape (/): Up/Down move through the results, Enter goes to the next, Esc closes";
  var searchWrap = el("span", {id: "search-wrap"});
  var results = el("ul", {id: "results", hidden: "", role: "listbox"});
  searchWrap.appendChild(search); searchWrap.appendChild(results);
  [searchWrap, prev, next, count, fit, zin, zout, dirBtn, themeBtn, exSvg, exPng].forEach(function (x) { bar.appendChild(x); });
  var notesEl = el("span", {id: "notes"}, (data.notes || []).join(" · "));
  bar.appendChild(notesEl);
  var sayEl = el("span", {id: "say", role: "status"}, "");  // a short answer to a key or a button
  bar.appendChild(sayEl);
  function say(text) { sayEl.textContent = text; }
  // Edges run from each consumer back to its inputs (MXNet's dot drawing), so data.rankdir, dot's
  // direction, is the opposite of the side the inputs are on (BT: inputs at the top, as
  // `kvcli viz --rankdir tb` asks). The page shows dot's drawing, or the other orientation laid out
  // by dagre the same way round: vertical with the inputs at the top (dagre's BT), horizontal with
  // the inputs on the left (dagre's RL).
  var vertical0 = data.rankdir === "TB" || data.rankdir === "BT";
  var vertical = vertical0;
  function dagreDir() { return vertical === vertical0 ? data.rankdir : vertical ? "BT" : "RL"; }
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
    "Learnable parameters: " + data.summary.params + " · Auxiliary states: " + data.summary.aux +
    " · MACs: " + data.summary.macs_text));
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
    costBox.hidden = which !== "cost";
    tabNode.className = which === "node" ? "on" : ""; tabGroups.className = which === "groups" ? "on" : "";
    tabSummary.className = which === "summary" ? "on" : ""; tabCost.className = which === "cost" ? "on" : "";
    if (which === "summary" && !summaryBox.firstChild) buildSummary();
    if (which === "cost" && !costBox.firstChild) buildCost();
  }
  tabNode.onclick = function () { showTab("node"); };
  tabGroups.onclick = function () { showTab("groups"); };
  tabSummary.onclick = function () { showTab("summary"); };

  // ---- the SVG: ids, pan and zoom --------------------------------------------------------
  var NS = "http://www.w3.org/2000/svg";
  var drawSvg = svg;  // dot's drawing of the folded plan, shown whenever nothing is expanded
  var els = {};  // unit key ("v<d>" draw, "m<g>" member of an expanded fold) -> its <g class="node">
  var edgeEl = [], edgeEnds = [];  // per edge: its <g>, and the draw indices of its two ends
  var inputsOf = Object.create(null), usersOf = Object.create(null);  // unit key -> the units it reads, that read it
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
    els = {}; edgeEl = []; edgeEnds = []; selected = null; inputsOf = Object.create(null); usersOf = Object.create(null);
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
      (inputsOf[t[0]] = inputsOf[t[0]] || []).push(t[1]);  // the keys walk these (i, o, n, p)
      (usersOf[t[1]] = usersOf[t[1]] || []).push(t[0]);
    });
    svg.removeAttribute("width"); svg.removeAttribute("height");
    var full = svg.viewBox.baseVal;
    box = {x: full.x, y: full.y, w: full.width, h: full.height};
    home = {x: box.x, y: box.y, w: box.w, h: box.h};
    if (costOn) paintCost(); else drawMini();  // a new view keeps the cost colours
  }
  function apply() { svg.setAttribute("viewBox", box.x + " " + box.y + " " + box.w + " " + box.h); placeMini(); }

  // ---- the overview (minimap): the whole drawing as an image, the view as a rectangle ------------
  var MINI = 180;  // longest side of the overview, in pixels
  var MINI_DARK = "g.graph > polygon { fill: #1e1e1e; stroke: none; } g.edge path { stroke: #bbb; } " +
    "g.edge polygon { stroke: #bbb; fill: #bbb; } g.edge text, g.graph > text, g.node.kv-plain text { fill: #ddd; }";
  var dark = false;  // the page's theme (set by showTheme)
  var miniUrl = null, miniText = "";  // the overview image, and the SVG text it was drawn from
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
    var style = null;
    if (dark) {  // the overview follows the page's theme: its own copy of the dark drawing's rules
      style = document.createElementNS(NS, "style");
      style.textContent = MINI_DARK;
      svg.insertBefore(style, svg.firstChild);
    }
    var text = new XMLSerializer().serializeToString(svg);
    miniText = text;
    if (style) style.remove();
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
    var key = startKey(), b = boundsOf([key]), size = scaled(START);
    if (!b) { doFit(); return; }
    // the input at the edge of the view it sits at in the drawing, the graph beyond it, and
    // across the flow centred between the input and its first consumer when both fit
    var cx = (b.x0 + b.x1) / 2, cy = (b.y0 + b.y1) / 2;
    var both = (usersOf[key] || []).length ? boundsOf([key, usersOf[key][0]]) : null;
    if (both && vertical && both.x1 - both.x0 + 48 <= size.w) cx = (both.x0 + both.x1) / 2;
    if (both && !vertical && both.y1 - both.y0 + 48 <= size.h) cy = (both.y0 + both.y1) / 2;
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


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
    expandAll.disabled = expandLevel.disabled = folds().every(function (d) { return expanded[d]; });
    doFit();
    if (zoomIn) fitTo(zoomIn);
    if (key) describe(key);
  }
  var foldAll = el("button", {id: "fold-all", disabled: ""}, "Fold all");
  var expandAll = el("button", {id: "expand-all", title: "expand every fold in place"}, "Expand all");
  var expandLevel = el("button", {id: "expand-level", title: "expand the folds nearest the inputs that are still folded"},
                       "Expand level");
  [expandAll, expandLevel, foldAll].forEach(function (b) { bar.insertBefore(b, exSvg); });
  foldAll.onclick = function () {
    if (!Object.keys(expanded).length) return;
    relayout(function () { expanded = {}; }, null, false);
    panel.textContent = "";
  };
  function folds() { return data.draws.map(function (dr, d) { return d; }).filter(function (d) { return membersOf[d].length > 1; }); }
  function expandMany(wanted, what) {  // expand these folds, as many as the page can lay out (smallest first)
    var shown = 0, todo = wanted.filter(function (d) { return !expanded[d]; });
    data.draws.forEach(function (dr, j) { shown += expanded[j] ? membersOf[j].length : 1; });
    todo.sort(function (a, b) { return membersOf[a].length - membersOf[b].length || a - b; });
    var take = [];
    todo.forEach(function (d) {
      if (shown + membersOf[d].length - 1 <= MAX_UNITS) { take.push(d); shown += membersOf[d].length - 1; }
    });
    notesEl.textContent = take.length < todo.length ? "Expanded " + take.length + " of the " + todo.length + " " + what +
      ": all of them would show more than the " + MAX_UNITS.toLocaleString("en-US") + " boxes the page lays out itself" : "";
    if (!take.length) return;
    relayout(function () { take.forEach(function (d) { expanded[d] = true; }); }, null, null);
  }
  expandAll.onclick = function () { expandMany(folds(), "folds"); };
  expandLevel.onclick = function () {  // levels: how many edges a fold is from the inputs (data.levels)
    var left = folds().filter(function (d) { return !expanded[d]; });
    if (!left.length) return;
    var next = Math.min.apply(null, left.map(function (d) { return data.levels[d]; }));
    expandMany(left.filter(function (d) { return data.levels[d] === next; }), "folds of the next level");
  };


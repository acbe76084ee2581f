  // ---- the model's cost: colour boxes by MACs, the costliest layers ---------------------------------
  // A box's MACs: its node's, or a fold's sum over all its members (data.draws[d].box.macs).
  var COST_BINS = [[0.5, "#bd0026"], [0.1, "#f03b20"], [0.01, "#fd8d3c"], [0.001, "#fecc5c"], [0, "#ffffb2"]];
  var NO_COST = "#eeeeee";  // a box without multiply-accumulates (activations, pooling, inputs ...)
  var costOn = false;
  function unitMacs(key) {  // null: unknown
    if (key.charAt(0) === "m") { var node = data.nodes[+key.slice(1)]; return node.macs === undefined ? 0 : node.macs; }
    var dr = data.draws[+key.slice(1)];
    if (!dr || !dr.members.length) return undefined;  // an output's shape label
    if (dr.box) return dr.box.macs.unknown && !dr.box.macs.total ? null : dr.box.macs.total;
    var one = data.nodes[dr.members[0]];
    return one.macs === undefined ? 0 : one.macs;
  }
  function costColour(m, top) {
    if (m === null) return null;  // unknown: keeps its kind's colour, said in the legend
    if (!m || !top) return NO_COST;
    for (var i = 0; i < COST_BINS.length; i++) if (m / top >= COST_BINS[i][0]) return COST_BINS[i][1];
    return COST_BINS[COST_BINS.length - 1][1];
  }
  function paintCost() {  // fills by cost (on) or back to the kinds' colours (off), this view's boxes
    var top = 0;
    Object.keys(els).forEach(function (k) { var m = unitMacs(k); if (m) top = Math.max(top, m); });
    Object.keys(els).forEach(function (k) {
      var m = unitMacs(k);
      if (m === undefined) return;
      els[k].querySelectorAll("polygon, ellipse").forEach(function (shape) {
        var fill = shape.getAttribute("fill");
        if (!fill || fill === "none") return;
        if (!shape.hasAttribute("data-fill")) shape.setAttribute("data-fill", fill);
        var c = costOn ? costColour(m, top) : null;
        shape.setAttribute("fill", c || shape.getAttribute("data-fill"));
      });
    });
    costLegend.textContent = "";
    if (costOn) {
      costLegend.appendChild(el("span", null, "MACs as a share of the costliest box, " + costText(top) + ":"));
      var names = ["≥ 50%", "≥ 10%", "≥ 1%", "≥ 0.1%", "< 0.1%"];
      COST_BINS.forEach(function (b, i) { costLegend.appendChild(el("span", {"class": "swatch", style: "background:" + b[1]}, names[i])); });
      costLegend.appendChild(el("span", {"class": "swatch", style: "background:" + NO_COST}, "none"));
    }
    costBtn.textContent = costOn ? "Kind colours" : "Cost colours";
    if (home) drawMini();
  }
  var costBtn = el("button", {id: "colour-cost", title: "colour the boxes by their multiply-accumulates (MACs), or by kind"}, "Cost colours");
  bar.insertBefore(costBtn, exSvg);
  var costLegend = el("span", {id: "cost-legend"});
  bar.appendChild(costLegend);
  costBtn.onclick = function () { costOn = !costOn; paintCost(); };

  var tabCost = el("button", {id: "tab-cost"}, "Cost");
  tabs.appendChild(tabCost);
  var costBox = el("div", {id: "cost", hidden: ""});
  side.appendChild(costBox);
  var COSTLIEST = 25;  // layers listed
  function buildCost() {
    costBox.textContent = "";
    costBox.appendChild(el("p", null, "MACs (multiply-accumulates of convolutions, fully-connected layers and RNNs): " +
      data.summary.macs_text));
    costBox.appendChild(el("p", null, "Output bytes (every layer's outputs): " + data.summary.bytes_text));
    var layers = data.summary.rows.filter(function (r) { return r.macs; });
    layers.sort(function (a, b) { return b.macs - a.macs || a.g - b.g; });
    if (!layers.length) { costBox.appendChild(el("p", null, "No layer does multiply-accumulates, or their shapes are unknown.")); return; }
    costBox.appendChild(el("h2", null, "Costliest layers"));
    var table = el("table", {id: "costliest"}), total = data.summary.macs || 1;
    var head = el("tr");
    ["Layer", "Op", "MACs", "share"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(head);
    layers.slice(0, COSTLIEST).forEach(function (r) {
      var tr = el("tr", {"data-g": String(r.g)});
      tr.appendChild(breakable(r.name));
      tr.appendChild(el("td", null, r.op));
      tr.appendChild(el("td", {"class": "num"}, n(r.macs)));
      tr.appendChild(el("td", {"class": "num"}, (100 * r.macs / total).toFixed(1) + " %"));
      tr.onclick = function () { showNode(r.g); };
      table.appendChild(tr);
    });
    costBox.appendChild(table);
    if (layers.length > COSTLIEST) costBox.appendChild(el("p", null, "… and " + n(layers.length - COSTLIEST) +
      " more in the Summary tab (sort by MACs)"));
  }
  tabCost.onclick = function () { showTab("cost"); };
  function breakable(name) {  // a cell whose long name may wrap after _ / . : - (never inside a word)
    var td = el("td");
    name.split(/(?<=[_\/.:-])/).forEach(function (part, i) {
      if (i) td.appendChild(document.createElement("wbr"));
      td.appendChild(document.createTextNode(part));
    });
    return td;
  }

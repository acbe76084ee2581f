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


  // ---- the node panel ---------------------------------------------------------------------
  var selected = null;  // unit key
  function row(table, key, value) {
    var tr = el("tr"); tr.appendChild(el("td", null, key)); tr.appendChild(el("td", null, value)); table.appendChild(tr);
    return tr;
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
    (first.weights || []).forEach(function (x) { row(t, "weight", x[0] + " : " + x[1]).setAttribute("data-weight", x[0]); });
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
    if (first.macs !== undefined) {
      row(t, "MACs", first.macs === null ? "unknown (a shape is unknown)" : costText(first.macs));
      row(t, "output bytes", first.bytes === null ? "unknown (a shape is unknown)" : bytesText(first.bytes));
    }
    panel.appendChild(t);
    if (!P) return;
    var names = first.op === "null" ? [first.name] : (first.weights || []).map(function (x) { return x[0]; });
    names.forEach(function (name) { if (own(P.tensors, name) || own(P.problems, name)) panel.appendChild(tensorBox(name)); });
  }
  function n(x) { return x.toLocaleString("en-US"); }
  function prefixed(x, steps, unit) {  // three significant digits and a prefix, as kvcli summary writes them
    for (var i = 0; i < steps.length; i++) {
      var t = +(x / steps[i][0]).toPrecision(3);
      if (Math.abs(t) < 1000 || i === steps.length - 1) return t + " " + steps[i][1] + unit;
    }
  }
  function costText(x) {  // 118,013,952 (118 M)
    if (!x) return "0";
    if (x < 1000) return n(x);  // "288", not "288 (288)"
    return n(x) + " (" + prefixed(x, [[1, ""], [1e3, "k"], [1e6, "M"], [1e9, "G"], [1e12, "T"]], "").trim() + ")";
  }
  function bytesText(x) {  // 3,211,264 (3.06 MiB)
    if (x < 1024) return n(x) + " B";
    return n(x) + " (" + prefixed(x, [[1024, "Ki"], [1048576, "Mi"], [1073741824, "Gi"], [1099511627776, "Ti"]], "B") + ")";
  }
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
    var each = b.macs.each[0] === b.macs.each[1] ? costText(b.macs.each[0]) : costText(b.macs.each[0]) + " to " + costText(b.macs.each[1]);
    row(t, "MACs", (b.macs.unknown ? "at least " : "") + costText(b.macs.total) + " in all" +
        (b.macs.total ? "; " + each + " per member" : ""));
    row(t, "output bytes", (b.bytes.unknown ? "at least " : "") + bytesText(b.bytes.total) + " in all");
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
    var version = own(P.versions, name);  // a session's weight: its key's version
    if (version !== undefined) row(t, "version", n(version) + " (1 when loaded or initialised; each push adds 1)");
    if (st.min !== undefined) {
      row(t, "min / max", fmt(st.min) + " / " + fmt(st.max));
      row(t, "mean / std", fmt(st.mean) + " / " + fmt(st.std));
    }
    if (st.zeros !== undefined) row(t, "zeros", (st.zeros * 100).toFixed(st.zeros > 0 && st.zeros < 0.001 ? 3 : 1) + " %");
    if (st.nonfinite) row(t, "NaN / inf", st.nonfinite.toLocaleString("en-US"));
    row(t, "first", st.first.map(fmt).join(", ") + (st.size > st.first.length ? ", …" : ""));
    box_.appendChild(t);
    if (st.hist) box_.appendChild(histogram(st));
    if (st.size) box_.appendChild(valuesBox(name, st));
    return box_;
  }
  function f32(x) {  // the shortest decimal that reads back as this float32
    if (!isFinite(x)) return String(x);
    for (var p = 1; p < 9; p++) { var s = x.toPrecision(p); if (Math.fround(+s) === x) return String(+s); }
    return String(+x.toPrecision(9));
  }
  var VALUES_PAGE = 50;  // values per page of the pager
  function valuesBox(name, st) {  // a tensor's values, paged: index (as the shape has it) and value
    var V = own(P.values, name), wrap = el("div", {"class": "values"});
    if (!V || !V.n) {
      wrap.appendChild(el("p", {"class": "note"}, V || P.limit === 0 ? "Values: not in this page (kvcli viz --values N puts them in)"
        : "Values: " + st.dtype + " values are not carried in the page"));
      return wrap;
    }
    var dims = st.shape === "scalar" ? [] : st.shape.split("x").map(Number), view = null, page = 0;
    var pages = Math.ceil(V.n / VALUES_PAGE), size = V.enc === "f8" || V.enc === "i8" ? 8 : 4;
    function value(i) {
      if (!view) {  // decoded when first shown
        var bin = atob(V.b64), bytes = new Uint8Array(bin.length);
        for (var k = 0; k < bin.length; k++) bytes[k] = bin.charCodeAt(k);
        view = new DataView(bytes.buffer);
      }
      if (V.enc === "f4") return f32(view.getFloat32(i * 4, true));
      if (V.enc === "f8") return String(view.getFloat64(i * 8, true));
      if (V.enc === "i8") return view.getBigInt64(i * 8, true).toString();
      return String(view.getInt32(i * size, true));
    }
    function index(i) {  // flat position -> [i, j, k] of the shape
      if (!dims.length) return "[]";
      var at = [];
      for (var d = dims.length - 1; d >= 0; d--) { at.unshift(i % dims[d]); i = Math.floor(i / dims[d]); }
      return "[" + at.join(", ") + "]";
    }
    var head = el("h4", null, "Values" + (V.n < st.size ? ": the first " + n(V.n) + " of " + n(st.size) +
      " are in this page (kvcli viz --values all puts in every value)" : " (" + n(V.n) + ")"));
    var bar_ = el("div", {"class": "pager"});
    var back = el("button", {"class": "v-prev", title: "previous values"}, "◀");
    var fwd = el("button", {"class": "v-next", title: "next values"}, "▶");
    var where = el("span", {"class": "v-page"}, "");
    var jump = el("input", {"class": "v-goto", type: "text", placeholder: "go to index", title: "a position: 1234, or an index of the shape: 3,0,1,2"});
    [back, fwd, where, jump].forEach(function (x) { bar_.appendChild(x); });
    var table = el("table", {"class": "v-table"});
    function show(p) {
      page = Math.max(0, Math.min(pages - 1, p));
      table.textContent = "";
      var from = page * VALUES_PAGE, to = Math.min(V.n, from + VALUES_PAGE);
      for (var i = from; i < to; i++) {
        var tr = el("tr");
        tr.appendChild(el("td", {"class": "v-index"}, index(i)));
        tr.appendChild(el("td", {"class": "num"}, value(i)));
        table.appendChild(tr);
      }
      where.textContent = n(from) + "–" + n(to - 1) + " of " + n(V.n);
      back.disabled = page === 0; fwd.disabled = page >= pages - 1;
    }
    back.onclick = function () { show(page - 1); };
    fwd.onclick = function () { show(page + 1); };
    jump.addEventListener("keydown", function (evt) {
      if (evt.key !== "Enter") return;
      var parts = jump.value.split(/[\s,\[\]]+/).filter(Boolean).map(Number), flat = 0;
      if (parts.some(isNaN)) return;
      if (parts.length > 1 && parts.length === dims.length) parts.forEach(function (x, d) { flat = flat * dims[d] + x; });
      else flat = parts[0] || 0;
      show(Math.floor(flat / VALUES_PAGE));
    });
    wrap.appendChild(head); wrap.appendChild(bar_); wrap.appendChild(table);
    show(0);
    return wrap;
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


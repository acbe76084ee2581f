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

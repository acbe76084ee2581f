  // ---- summary table ----------------------------------------------------------------------
  function buildSummary() {
    var outs = Object.keys(data.summary.outputs).map(function (k) { return k + ": " + data.summary.outputs[k]; });
    summaryBox.appendChild(el("p", null, "Outputs: " + outs.join(", ")));
    var table = el("table", {id: "sumtable"});
    var cols = [["name", "Layer"], ["op", "Op"], ["shape", "Output shape"], ["params", "Params"], ["aux", "Aux"],
                ["macs", "MACs"], ["bytes", "Output bytes"]];
    var NUM = {params: 1, aux: 1, macs: 1, bytes: 1};
    var head = el("tr");
    var body = el("tbody");
    var order = {key: null, dir: 1};
    function fill() {
      body.textContent = "";
      var rows = data.summary.rows.slice();
      if (order.key) rows.sort(function (a, b) {
        var x = a[order.key], y = b[order.key];
        if (x === null) x = -1; if (y === null) y = -1;  // unknown MACs or bytes sort below 0
        return (x < y ? -1 : x > y ? 1 : 0) * order.dir;
      });
      var frag = document.createDocumentFragment();
      rows.forEach(function (r) {
        var tr = el("tr");
        cols.forEach(function (c) {
          var v = r[c[0]];
          var text = !NUM[c[0]] ? String(v) : v === null ? "?" :
            (v ? v.toLocaleString("en-US") + (c[0] === "params" && r.unknown ? " + ?" : "") : "");
          tr.appendChild(el("td", NUM[c[0]] ? {"class": "num"} : null, text));
        });
        frag.appendChild(tr);
      });
      body.appendChild(frag);
    }
    cols.forEach(function (c) {
      var th = el("th", {"data-key": c[0]}, c[1]);
      th.onclick = function () { order.dir = order.key === c[0] ? -order.dir : (NUM[c[0]] ? -1 : 1); order.key = c[0]; fill(); };
      head.appendChild(th);
    });
    var thead = el("thead"); thead.appendChild(head);
    table.appendChild(thead); table.appendChild(body);
    summaryBox.appendChild(table);
    var tot = el("tfoot"); var tr = el("tr");
    tr.appendChild(el("td", {colspan: "3"}, "Totals"));
    tr.appendChild(el("td", {"class": "num"}, data.summary.params));
    tr.appendChild(el("td", {"class": "num"}, data.summary.aux));
    tr.appendChild(el("td", {"class": "num"}, data.summary.macs_text));
    tr.appendChild(el("td", {"class": "num"}, data.summary.bytes_text));
    tot.appendChild(tr); table.appendChild(tot);
    fill();
  }

  // ---- export the whole graph (as shown: folds expanded or not, collapsed groups) ---------------
  function wholeSvg() {
    var copy = svg.cloneNode(true);
    copy.querySelectorAll(".kv-hidden").forEach(function (x) { x.remove(); });
    copy.setAttribute("xmlns", "http://www.w3.org/2000/svg");
    copy.setAttribute("viewBox", home.x + " " + home.y + " " + home.w + " " + home.h);
    copy.setAttribute("width", Math.round(home.w)); copy.setAttribute("height", Math.round(home.h));
    return new XMLSerializer().serializeToString(copy);
  }
  function download(name, blob) {
    var a = document.createElement("a");
    a.download = name; a.href = URL.createObjectURL(blob);
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(function () { URL.revokeObjectURL(a.href); }, 1000);
  }
  var CANVAS_SIDE = 32767, CANVAS_AREA = 250e6;  // what a browser's canvas holds, in pixels
  function pngScale() {  // 2 pixels per point, less when the whole graph would not fit a canvas
    return Math.min(2, CANVAS_SIDE / Math.max(home.w, home.h), Math.sqrt(CANVAS_AREA / (home.w * home.h)));
  }
  exSvg.onclick = function () { download(data.title + ".svg", new Blob([wholeSvg()], {type: "image/svg+xml"})); };
  exPng.onclick = function () {
    var img = new Image(), scale = pngScale();
    var url = URL.createObjectURL(new Blob([wholeSvg()], {type: "image/svg+xml"}));
    img.onload = function () {
      var c = document.createElement("canvas");
      c.width = Math.max(1, Math.round(home.w * scale)); c.height = Math.max(1, Math.round(home.h * scale));
      var ctx = c.getContext("2d"); ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, c.width, c.height);
      ctx.drawImage(img, 0, 0, c.width, c.height);
      URL.revokeObjectURL(url);
      c.toBlob(function (b) { download(data.title + ".png", b); }, "image/png");
      notesEl.textContent = scale < 1 ? "The PNG of the whole graph is drawn at " + Math.round(scale * 100) +
        "% (a browser's image is at most " + CANVAS_SIDE.toLocaleString("en-US") + " pixels a side); Export SVG keeps it full size" : "";
    };
    img.src = url;
  };

  // ---- search: one list of operators, weights and other tensors found (name, op, shape) ----------
  var MAX_LISTED = 100;  // rows of the result list shown at a time (Up/Down scroll through all)
  var found = [], hits = [], at = -1, shownAt = -1;  // found: graph indices; hits: the boxes lit
  function unitOf(g) { var d = drawOf[g]; return expanded[d] ? "m" + g : "v" + d; }
  // a weight is not drawn: it is found, linked and shown at its first consumer (data.nodes[g].by)
  function shownAt_(g) { var n = data.nodes[g]; return n.d >= 0 ? g : n.by; }
  function kindOf(n) {
    if (n.op !== "null") return n.op;
    return n.role === "param" ? "weight" : n.role === "aux" ? "aux state" : n.role || "input";
  }
  function matches(n, q) {
    return n.name.toLowerCase().indexOf(q) >= 0 || kindOf(n).toLowerCase().indexOf(q) >= 0 ||
      (n.out || []).some(function (s) { return s.toLowerCase().indexOf(q) >= 0; });
  }
  function clearHits() {
    hits.forEach(function (k) { if (els[k]) els[k].classList.remove("hit", "current"); });
    hits = [];
  }
  function runSearch(keep) {  // keep: the list is the same (a relayout), so is the position in it
    clearHits();
    if (!keep) { at = -1; shownAt = -1; }
    var q = search.value.trim().toLowerCase().replace(/[, ]+/g, "x");  // "3,3" finds the shape 3x3
    found = [];
    if (q) {
      data.nodes.forEach(function (n, g) {
        if ((n.d >= 0 || n.by !== undefined) && matches(n, q)) found.push(g);
      });
      // in drawing order; at one box, the node before the weights shown with it
      found.sort(function (a, b) {
        return drawOf[shownAt_(a)] - drawOf[shownAt_(b)] || (shownAt_(a) !== a) - (shownAt_(b) !== b) || a - b;
      });
      var seen = Object.create(null);
      found.forEach(function (g) { var k = unitOf(shownAt_(g)); if (!seen[k]) { seen[k] = true; hits.push(k); } });
      hits.forEach(function (k) { if (els[k]) els[k].classList.add("hit"); });
      var cur = shownAt >= 0 ? unitOf(shownAt_(found[shownAt])) : null;
      if (cur && els[cur]) els[cur].classList.add("current");
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
      li.appendChild(el("span", {"class": "r-op"}, kindOf(n)));
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
  function showNode(g) {  // select and centre graph node g (a weight: its consumer, the weight in view)
    var key = reveal(shownAt_(g));
    hits.forEach(function (k) { if (els[k]) els[k].classList.remove("current"); });
    if (els[key]) els[key].classList.add("current");
    centerOn(key); describe(key);
    if (shownAt_(g) !== g) showWeight(data.nodes[g].name);
  }
  function showWeight(name) {  // the weight's row and tensor in the panel, marked and scrolled to
    var first = null;
    panel.querySelectorAll("[data-weight], .tensor[data-name]").forEach(function (x) {
      var on = (x.getAttribute("data-weight") || x.getAttribute("data-name")) === name;
      x.classList.toggle("focus", on);
      if (on && !first) first = x;
    });
    if (first && first.scrollIntoView) first.scrollIntoView({block: "nearest"});
    setHash(name);
  }
  function reveal(g) {  // the box showing graph node g: a fold holding it is expanded when the page can
    var d = drawOf[g];
    if (!expanded[d] && membersOf[d].length > 1) setExpanded(d, true, true);
    return unitOf(g);
  }
  function go(i) {  // show result i: select and centre it
    if (!found.length) return;
    at = shownAt = (i + found.length) % found.length;
    showNode(found[at]);
    count.textContent = (at + 1) + "/" + found.length;
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
      case "i": walk("in"); break;
      case "o": walk("out"); break;
      case "n": walk("next"); break;
      case "p": walk("prev"); break;
      case "?": keysHelp(); break;
      default: handled = false;
    }
    if (handled) evt.preventDefault();
  });
  // ---- moving along edges: i (an input), o (a consumer), n / p (the next / previous sibling) -----
  var trail = null;  // the list the last i/o chose from (inputs of X, or consumers of X) and where in it
  function drawnUnit(k) { var dr = data.draws[unitDraw(k)]; return dr && dr.members.length > 0; }
  function walk(how) {
    if (!selected || !els[selected]) { var first = startKey(); centerOn(first); describe(first); trail = null; return; }
    if (how === "in" || how === "out") {
      var list = ((how === "in" ? inputsOf : usersOf)[selected] || []).filter(drawnUnit);
      if (!list.length) { say(how === "in" ? "This node reads no drawn input." : "Nothing drawn reads this node."); return; }
      trail = {list: list, at: 0};
    } else {
      if (!trail || trail.list.indexOf(selected) < 0) {  // siblings: the other inputs of the first consumer
        var user = (usersOf[selected] || []).filter(drawnUnit)[0];
        var sibs = user ? (inputsOf[user] || []).filter(drawnUnit) : [];
        if (sibs.length < 2) { say("This node has no sibling."); return; }
        trail = {list: sibs, at: sibs.indexOf(selected)};
      }
      trail.at = (trail.at + (how === "next" ? 1 : -1) + trail.list.length) % trail.list.length;
    }
    say("");
    var key = trail.list[trail.at], keep = trail;
    centerOn(key); describe(key);
    trail = keep;
  }
  function keysHelp() {
    showTab("node");
    panel.textContent = "";
    panel.appendChild(el("h2", null, "Keys"));
    var t = el("table", {id: "keys"});
    [["i / o", "go to an input / a consumer of the selected node"], ["n / p", "the next / previous sibling"],
     ["arrows", "pan"], ["+ / -", "zoom in / out"], ["0", "the whole graph"], ["/ or Ctrl+F", "search"],
     ["Enter, Shift+Enter", "next / previous result"], ["Esc", "clear the selection"], ["?", "this list"]
    ].forEach(function (k) { row(t, k[0], k[1]); });
    panel.appendChild(t);
  }
  function setHash(name) {  // the address names the selected node (replaced, not a new history entry)
    var url = location.href.split("#")[0] + (name === null ? "" : "#node=" + encodeURIComponent(name));
    if (url === location.href) return;
    try { history.replaceState(null, "", url); } catch (e) { /* a browser that refuses it for file: pages */ }
  }
  function nodeNamed(name) {  // a drawn node, else a weight shown at its consumer
    var weight = -1;
    for (var g = 0; g < data.nodes.length; g++) {
      var n = data.nodes[g];
      if (n.name !== name) continue;
      if (n.d >= 0) return g;
      if (weight < 0 && n.by !== undefined) weight = g;
    }
    return weight;
  }
  function fromHash() {  // #node=NAME: select and centre that node (or the weight's consumer)
    var m = /^#node=(.*)$/.exec(location.hash), name;
    if (!m) return false;
    try { name = decodeURIComponent(m[1]); } catch (e) { return false; }
    var g = nodeNamed(name);
    if (g < 0) { notesEl.textContent = "#node=: no node or weight is named " + name; return false; }
    showNode(g);
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
  dark = !!(media && media.matches);
  function showTheme() {
    document.documentElement.classList.toggle("dark", dark);
    themeBtn.textContent = dark ? "Light" : "Dark";
    if (home) drawMini();
  }
  themeBtn.onclick = function () { dark = !dark; showTheme(); };
  if (media && media.addEventListener) media.addEventListener("change", function (e) { dark = e.matches; showTheme(); });



  install(svg);
  expandAll.disabled = expandLevel.disabled = !folds().length;
  showDir(); showTheme();
  if (!fromHash()) startView();
  window.kvcliViewer = {ready: true, describe: describe, collapse: setCollapsed, groups: data.groups, currentSvg: wholeSvg, wholeSvg: wholeSvg, pngScale: pngScale,
                        home: function () { return home; }, folds: folds, expanded: function () { return expanded; },
                        miniText: function () { return miniText; },
                        expand: setExpanded, visible: visible, fit: doFit};
  document.body.setAttribute("data-ready", "1");

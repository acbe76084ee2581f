
  install(svg);
  showDir(); showTheme();
  if (!fromHash()) startView();
  window.kvcliViewer = {ready: true, describe: describe, collapse: setCollapsed, groups: data.groups, currentSvg: currentSvg,
                        expand: setExpanded, visible: visible, fit: doFit};
  document.body.setAttribute("data-ready", "1");

"""MXNet symbol graphs without MXNet: load, infer shapes, summarise, draw, build.

Modules (each has one job; import the one you need):

* :mod:`kvcli.symbol.graph`   - the Graph model; read/write symbol JSON of every MXNet era
* :mod:`kvcli.symbol.ops`     - the operator table (inputs, outputs, parameter slots)
* :mod:`kvcli.symbol.shapes`  - shape inference (MXNet 1.9.1's rules)
* :mod:`kvcli.symbol.summary` - per-layer table and parameter totals
* :mod:`kvcli.symbol.render`  - graphviz drawing in ``mx.viz.plot_network``'s style
* :mod:`kvcli.symbol.build`   - ``mx.sym``: Variable, operators, arithmetic, tojson
* :mod:`kvcli.symbol.viz`     - ``mx.viz``: plot_network, print_summary

Nothing heavy is imported here.
"""

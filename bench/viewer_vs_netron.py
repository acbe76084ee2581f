"""Benchmark: time to the first drawing of a model, kvcli's viewer beside Netron, in one browser.

    .venv/bin/python bench/viewer_vs_netron.py --netron-python /path/to/venv/bin/python [--repeat 3] [--json]

The Netron side needs Netron installed in a Python of its own, outside this repository
(``python -m venv netron-venv && netron-venv/bin/pip install netron==9.3.3``); this script only
runs that Python. Both are driven by headless Chromium (selenium) with a 1400x900 window:

* **kvcli**: ``kvcli viz MODEL -o page.html`` with the input shapes (a fresh process: load,
  shapes, cost, fold, graphviz layout, page), then the page opened from disk until it has
  drawn (``data-ready``).
* **Netron**: ``netron.serve(MODEL)`` on 127.0.0.1 (a fresh process, until it answers), then
  its page opened until its drawing replaces the spinner (``body`` leaves ``welcome``), the
  browser's cache emptied first. Netron's consent cookie is set beforehand, so no banner and no
  look-up on the network delays it; Netron infers no MXNet shapes, so it is given none.

Per model and side: the median of ``--repeat`` runs of each part and their sum, the page's
size (kvcli: the HTML file; Netron: what the browser fetched, app and model), and whether it
drew at all (a tab that crashes or a drawing not done in ``--timeout`` seconds is said so).
Models: the real files kept in ``tests/data`` (sources in tests/data/SOURCES.md).
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"

#: (label, file in tests/data, kvcli --shape values)
MODELS = [
    ("LeNet", "mxnet_models/lenet-symbol.json", ["data=1,1,28,28"]),
    ("MobileNet 1.0", "mxnet_cost/mobilenet1.0-symbol.json", ["data=1,3,224,224"]),
    ("ResNet-50 v1", "mxnet_cost/resnet50_v1-symbol.json", ["data=1,3,224,224"]),
    ("Inception v3", "mxnet_models/inceptionv3-symbol.json", ["data=1,3,299,299"]),
    ("DenseNet-121", "mxnet_models/densenet121-symbol.json", ["data=1,3,224,224"]),
    ("OCR LSTM (802 nodes)", "sample_models/mxnet_v0.9_ocr_lstm_warpctc_attr.json", ["data=1,30,80"]),
    ("char-LSTM (6,084 nodes)", "sample_models/mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json",
     ["data/*=32", "l*_init_*=32,512"]),
]

NETRON_SERVER = """
import sys, time
import netron
netron.serve(sys.argv[1], address=("127.0.0.1", int(sys.argv[2])), browse=False)
while True:
    time.sleep(3600)
"""


def _browser(profile: Path) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                f"--user-data-dir={profile}", "--window-size=1400,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                              options=options)
    driver.set_page_load_timeout(600)
    return driver


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(driver: Any, script: str, timeout: float) -> Optional[str]:
    """Poll ``script`` until it is true; ``None`` when it was, else why not (timeout, crash)."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        try:
            if driver.execute_script(script):
                return None
        except Exception as error:  # noqa: BLE001 - a crashed tab is a result here
            return f"the tab crashed ({str(error).splitlines()[0][:80]})"
        time.sleep(0.01)
    return f"no drawing after {timeout:g} s"


def kvcli_run(driver: Any, path: Path, shapes: list[str], out: Path, timeout: float) -> dict[str, Any]:
    args = [sys.executable, "-m", "kvcli", "viz", str(path), "-o", str(out), "--yes"]  # a rerun redraws
    for shape in shapes:
        args += ["--shape", shape]
    t0 = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, cwd=REPO)
    command = time.perf_counter() - t0
    t0 = time.perf_counter()
    driver.get(out.as_uri())
    failed = _wait(driver, "return document.body && document.body.getAttribute('data-ready') === '1'", timeout)
    return {"command_s": command, "page_s": time.perf_counter() - t0, "failed": failed,
            "bytes": out.stat().st_size}


def netron_run(driver: Any, netron_python: str, path: Path, timeout: float) -> dict[str, Any]:
    port = _free_port()
    t0 = time.perf_counter()
    server = subprocess.Popen([netron_python, "-c", NETRON_SERVER, str(path), str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if server.poll() is not None or time.perf_counter() - t0 > 60:
                    raise RuntimeError(f"netron did not start for {path.name}") from None
                time.sleep(0.01)
        started = time.perf_counter() - t0
        url = f"http://127.0.0.1:{port}/"
        driver.get(url + "favicon.ico")  # the consent cookie, on this origin, before the timed load
        driver.add_cookie({"name": "consent", "value": str(int(time.time() * 1000))})
        driver.execute_cdp_cmd("Network.clearBrowserCache", {})
        t0 = time.perf_counter()
        driver.get(url)
        failed = _wait(driver, "return document.body && !/welcome|spinner/.test(document.body.className)", timeout)
        page = time.perf_counter() - t0
        fetched = None
        if failed is None:
            fetched = driver.execute_script(
                "return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))"
                ".reduce(function (n, e) { return n + (e.encodedBodySize || 0); }, 0)")
        return {"command_s": started, "page_s": page, "failed": failed, "bytes": fetched}
    finally:
        server.kill()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--netron-python", required=True, help="a Python with netron installed (outside this repo)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per model and side (the median is kept)")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds to wait for a drawing")
    parser.add_argument("--only", help="run only the models whose label contains this")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    version = subprocess.run([args.netron_python, "-c", "import netron; print(netron.__version__)"],
                             check=True, capture_output=True, text=True).stdout.strip()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for label, name, shapes in MODELS:
            if args.only and args.only not in label:
                continue
            model = work / (Path(name).stem.replace("-symbol", "") + "-symbol.json")  # as MXNet names them
            shutil.copy(DATA / name, model)
            result: dict[str, Any] = {"model": label}
            for side in ("kvcli", "netron"):
                runs = []
                for k in range(args.repeat):
                    driver = _browser(work / f"profile-{side}-{k}")  # a new browser: nothing cached
                    try:
                        if side == "kvcli":
                            runs.append(kvcli_run(driver, model, shapes, work / "page.html", args.timeout))
                        else:
                            runs.append(netron_run(driver, args.netron_python, model, args.timeout))
                    finally:
                        driver.quit()
                    if runs[-1]["failed"]:
                        break  # a crash or a timeout is not repeated
                failed = next((r["failed"] for r in runs if r["failed"]), None)
                result[side] = {"command_s": statistics.median(r["command_s"] for r in runs),
                                "page_s": statistics.median(r["page_s"] for r in runs),
                                "total_s": statistics.median(r["command_s"] + r["page_s"] for r in runs),
                                "bytes": runs[0]["bytes"], "failed": failed, "runs": len(runs)}
            rows.append(result)
            if not args.json:
                _print_row(result)
    if args.json:
        print(json.dumps({"netron": version, "repeat": args.repeat, "models": rows}, indent=1))


def _print_row(r: dict[str, Any]) -> None:
    k, n = r["kvcli"], r["netron"]

    def side(x: dict[str, Any]) -> str:
        if x["failed"]:
            return f"{x['failed']} (after {x['command_s'] + x['page_s']:.1f} s)"
        return f"{x['total_s']:.2f} s ({x['command_s']:.2f} + {x['page_s']:.2f})"

    ratio = f"{n['total_s'] / k['total_s']:.1f}x" if not (k["failed"] or n["failed"]) else "-"
    size = f"{k['bytes'] / 1e6:.2f} MB / {n['bytes'] / 1e6:.2f} MB" if n["bytes"] else f"{k['bytes'] / 1e6:.2f} MB / -"
    print(f"{r['model']:<26} kvcli {side(k):<28} Netron {side(n):<40} {ratio:>6}  {size}", flush=True)


if __name__ == "__main__":
    main()

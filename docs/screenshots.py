"""Redraw the screenshots of the HTML viewer (README.md, docs/viz.md) with headless Chromium (selenium).

    .venv/bin/python docs/screenshots.py

* ``docs/viewer.png``: ResNet-50 (tests/data/sample_models): the search's result list, the third hit centred
  and its details in the side panel, the overview in the corner.
* ``docs/viewer-expanded.png``: the char-LSTM (6,069 nodes, drawn folded): a search for
  ``t2_l0_i2h`` opens the fold ``t0_l0_i2h … t128_l0_i2h (×129)`` in place and selects that
  member (its weights shared with ``t0_l0_i2h``).
* ``docs/viewer-cost.png``: MobileNet 1.0 (tests/data/mxnet_cost) coloured by cost, the Cost tab's
  costliest layers beside it.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "tests" / "data" / "sample_models"


def page(model: str, *shapes: str, out: Path) -> Path:
    args = [sys.executable, "-m", "kvcli", "viz", str(MODELS / model), "-o", str(out)]
    for shape in shapes:
        args += ["--shape", shape]
    subprocess.run(args, check=True, cwd=REPO)
    return out


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="kvcli-shots-"))
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp / 'profile'}",
                "--window-size=1400,900", "--hide-scrollbars"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        def show(path: Path, *keys: str) -> None:
            driver.get(path.as_uri())
            while driver.execute_script("return document.body.getAttribute('data-ready')") != "1":
                time.sleep(0.02)
            box = driver.find_element(By.ID, "search")
            box.send_keys(*keys)

        show(page("mxnet_v1.3_resnet50_attrs.json", "data=1,3,224,224", out=tmp / "resnet.html"),
             "unit2_conv", Keys.ARROW_DOWN, Keys.ARROW_DOWN, Keys.ARROW_DOWN, Keys.ENTER)
        driver.save_screenshot(str(REPO / "docs" / "viewer.png"))
        show(page("mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json", "data/*=32", "l*_init_*=32,512",
                  out=tmp / "char.html"), "t2_l0_i2h", Keys.ENTER, Keys.ESCAPE)
        driver.save_screenshot(str(REPO / "docs" / "viewer-expanded.png"))
        show(page("../mxnet_cost/mobilenet1.0-symbol.json", "data=1,3,224,224", out=tmp / "mobilenet.html"))
        driver.find_element(By.ID, "colour-cost").click()
        driver.find_element(By.ID, "tab-cost").click()
        driver.find_element(By.TAG_NAME, "body").send_keys("o", "o", "o", "o")  # along the data, past the stem
        driver.find_element(By.ID, "tab-cost").click()
        driver.save_screenshot(str(REPO / "docs" / "viewer-cost.png"))
    finally:
        driver.quit()


if __name__ == "__main__":
    main()

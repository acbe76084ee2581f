"""A graphviz PDF cut into printable pages of a standard size (A4), by an incremental update.

``dot -Tpdf`` (cairo) writes one page as big as the drawing: 7 x 264 inches for ResNet-50,
which no printer takes. :func:`paginate` keeps that file's objects as they are and appends
(PDF's incremental update: new objects, a new page tree and catalogue, an xref section that
points back to the old one) a page tree of A4 pages, each showing one tile of the drawing at
full size or shrunk to the page's width (when :data:`MIN_SCALE` is enough; else at full size,
tiled across too), clipped to the page's margins. Tiles overlap by :data:`OVERLAP` points,
more than a box is tall, so every box and its label is whole on at least one page. The
orientation that needs fewer pages is chosen.

Only cairo's single-page PDFs with a classic xref table are understood (what graphviz
writes); anything else is returned unchanged with ``None`` as its layout, and the caller says so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Optional

#: A4 in points (portrait).
A4 = (595.28, 841.89)
#: Blank margin on each side of a page, in points.
MARGIN = 28.0
#: How much neighbouring tiles share, in points of the page: taller than a folded box with
#: its label (five lines of 14-pt text in a 0.8 in box), so every box is whole on some page.
OVERLAP = 108.0
#: Smallest scale used to fit the drawing's width on the page (below it, more columns of pages).
MIN_SCALE = 0.6


@dataclass(frozen=True)
class Pages:
    """How a drawing was cut: ``columns`` x ``rows`` pages of ``size`` points at ``scale``."""

    columns: int
    rows: int
    scale: float
    size: tuple[float, float]

    @property
    def count(self) -> int:
        return self.columns * self.rows

    def text(self) -> str:
        """``"5 A4 pages (1 across, 5 down) at 100%"``."""
        return (f"{self.count:,} A4 page{'s' if self.count != 1 else ''} ({self.columns:,} across, {self.rows:,} down) "
                f"at {round(self.scale * 100)}%")


def _tiles(length: float, room: float, scale: float) -> int:
    """Pages needed along one side: ``length`` drawing points, ``room`` page points each."""
    if length * scale <= room:
        return 1
    step = room - OVERLAP
    return 1 + math.ceil((length * scale - room) / step)


def plan_pages(width: float, height: float, page: tuple[float, float] = A4) -> Pages:
    """The cut with the fewest pages: portrait or landscape, width fitted when the scale allows."""
    best: Optional[Pages] = None
    for size in (page, (page[1], page[0])):
        room_w, room_h = size[0] - 2 * MARGIN, size[1] - 2 * MARGIN
        fit = room_w / width if width > 0 else 1.0  # the width on one page, unless that takes below MIN_SCALE
        scale = fit if MIN_SCALE <= fit < 1.0 else 1.0
        cut = Pages(_tiles(width, room_w, scale), _tiles(height, room_h, scale), scale, size)
        if best is None or cut.count < best.count:
            best = cut
    assert best is not None
    return best


_NUM = rb"(-?\d+(?:\.\d+)?)"


def _object(pdf: bytes, number: int) -> Optional[bytes]:
    m = re.search(rb"(?<![\d])" + str(number).encode() + rb" 0 obj\b(.*?)\bendobj", pdf, re.S)
    return m.group(1) if m else None


def paginate(pdf: bytes, page: tuple[float, float] = A4) -> tuple[bytes, Optional[Pages]]:
    """``pdf`` (one page, as ``dot -Tpdf`` writes it) with a page tree of printable pages
    appended, and how it was cut; ``(pdf, None)`` unchanged when its form is not understood."""
    trailer = re.search(rb"trailer\s*<<(.*?)>>\s*startxref\s*(\d+)\s*%%EOF\s*$", pdf, re.S)
    if trailer is None:
        return pdf, None
    size = re.search(rb"/Size (\d+)", trailer.group(1))
    info = re.search(rb"/Info (\d+) 0 R", trailer.group(1))
    root = re.search(rb"/Root (\d+) 0 R", trailer.group(1))
    if size is None or root is None:
        return pdf, None
    catalog = _object(pdf, int(root.group(1)))
    pages_ref = re.search(rb"/Pages (\d+) 0 R", catalog or b"")
    tree = _object(pdf, int(pages_ref.group(1))) if pages_ref else None
    kids = re.search(rb"/Kids \[\s*(\d+) 0 R\s*\]", tree or b"")
    first = _object(pdf, int(kids.group(1))) if kids else None
    if first is None:
        return pdf, None
    box = re.search(rb"/MediaBox \[\s*" + rb"\s+".join([_NUM] * 4) + rb"\s*\]", first)
    contents = re.search(rb"/Contents (\d+) 0 R", first)
    resources = re.search(rb"/Resources (\d+) 0 R", first)
    if box is None or contents is None or resources is None:
        return pdf, None
    x0, y0, x1, y1 = (float(box.group(k)) for k in range(1, 5))
    width, height = x1 - x0, y1 - y0
    cut = plan_pages(width, height, page)
    pw, ph = cut.size
    room_w, room_h = pw - 2 * MARGIN, ph - 2 * MARGIN
    s = cut.scale
    next_number = int(size.group(1))
    objects: list[tuple[int, bytes]] = []
    kids_out: list[int] = []
    tree_number = next_number + 2 * cut.count
    catalog_number = tree_number + 1
    suffix_number = catalog_number + 1
    objects.append((suffix_number, _stream(b"Q\n")))
    for row in range(cut.rows):
        for col in range(cut.columns):
            # drawing point (X, Y) -> page (s*X + tx, s*Y + ty): the tile's top-left at the margin's
            left = x0 + col * (room_w - OVERLAP) / s
            top = y1 - row * (room_h - OVERLAP) / s
            tx, ty = MARGIN - s * left, (ph - MARGIN) - s * top
            prefix = (f"q {MARGIN:.2f} {MARGIN:.2f} {room_w:.2f} {room_h:.2f} re W n "
                      f"{s:.5f} 0 0 {s:.5f} {tx:.3f} {ty:.3f} cm\n").encode("ascii")
            pre_number, page_number = next_number, next_number + 1
            next_number += 2
            objects.append((pre_number, _stream(prefix)))
            objects.append((page_number, (
                f"<< /Type /Page /Parent {tree_number} 0 R /MediaBox [0 0 {pw:.2f} {ph:.2f}] "
                f"/Contents [{pre_number} 0 R {contents.group(1).decode()} 0 R {suffix_number} 0 R] "
                f"/Resources {resources.group(1).decode()} 0 R >>").encode("ascii")))
            kids_out.append(page_number)
    objects.append((tree_number, (f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids_out)}] "
                                  f"/Count {len(kids_out)} >>").encode("ascii")))
    objects.append((catalog_number, f"<< /Type /Catalog /Pages {tree_number} 0 R >>".encode("ascii")))
    out = bytearray(pdf if pdf.endswith(b"\n") else pdf + b"\n")
    offsets: dict[int, int] = {}
    for number, body in sorted(objects):
        offsets[number] = len(out)
        out += f"{number} 0 obj\n".encode("ascii") + body + b"\nendobj\n"
    xref_at = len(out)
    first_new = int(size.group(1))
    last = max(offsets)
    out += f"xref\n{first_new} {last - first_new + 1}\n".encode("ascii")
    for number in range(first_new, last + 1):
        out += f"{offsets[number]:010d} 00000 n \n".encode("ascii")
    extra = f" /Info {info.group(1).decode()} 0 R" if info else ""
    out += (f"trailer\n<< /Size {last + 1} /Root {catalog_number} 0 R{extra} /Prev {trailer.group(2).decode()} >>\n"
            f"startxref\n{xref_at}\n%%EOF\n").encode("ascii")
    return bytes(out), cut


def _stream(data: bytes) -> bytes:
    return f"<< /Length {len(data)} >>\nstream\n".encode("ascii") + data + b"\nendstream"

"""The numbers written in a piece of text, as a reader reads them (alt texts, a page's words).

A number glued to a word is not one (float32, A100, 3-D, d_model); a number keeps its sign,
thousands separators, decimals, exponent and an optional percent sign.
"""

from __future__ import annotations

import re

NUMBER = re.compile(
    r"(?<![\w.^/])(?P<sign>[-\u2212])?(?P<digits>\d{1,3}(?:,\d{3})+|\d+)(?P<decimals>\.\d+)?"
    r"(?P<exponent>e[-+]?\d+)?(?P<percent>\s*(?:%|percent))?(?![\w\u00b2\u00b3^]|-D\b)"
)


def numbers(text: str) -> list[tuple[str, float, bool, int | None]]:
    """Every number of `text`: (as written, value, percent?, decimals written or None for 1e-3)."""
    found = []
    for m in NUMBER.finditer(text):
        digits = m["digits"].replace(",", "")
        value = float(digits + (m["decimals"] or "") + (m["exponent"] or ""))
        if m["sign"]:
            value = -value
        decimals = None if m["exponent"] else len((m["decimals"] or ".")[1:])
        found.append((m.group(0).strip(), value, bool(m["percent"]), decimals))
    return found

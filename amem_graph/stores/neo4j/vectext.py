"""Many embeddings as the text ``_VECTOR_EXPR`` parses, built with numpy instead of per float.

``props._unit_vector`` writes each value with ``f"{v:.9g}"``: about 1.3 us a value here, so
0.5 ms of client time for one 384-dim memory, the largest client cost of a bulk import. These
functions give the same unit rows and, per value, the same nine correctly rounded significant
digits in a fixed-width notation, ``f"{v:+.8e}"`` ('+1.23456789e-02' where ``_unit_vector``
writes '0.0123456789'): the same decimal number, so the server parses the same double and
stores the same float32. Fixed width lets every value of a matrix be written at once, with no
per-value Python: digits come from integer arithmetic and a digit table.
"""

from __future__ import annotations

from typing import Final

import numpy as np

#: 10**k as float64 for the exact range: a float32 (24-bit mantissa) times 10**k for k <= 12
#: fits float64's 53 bits, so rounding the product to 9 digits is correctly rounded
_POW10: Final = np.array([float(10**k) for k in range(13)])
#: values in [_EXACT_MIN, _EXACT_TOP] have 9 exact digits from that product; others are rare
#: in unit vectors (~1 value in 600 is below 1e-4) and formatted by Python
_EXACT_MIN: Final = 1e-4
_EXACT_TOP: Final = 9999.0
#: one value is 16 bytes, two little-endian 64-bit words built from tables (each table puts
#: its characters at their byte offsets): '+d.dddd' 'd' | 'ddde' '+XX,'
_WIDTH: Final = 16


def _word(chars: dict[int, int]) -> int:
    """A 64-bit word with ``chars`` (byte offset -> ASCII code) at their offsets."""
    return sum(code << (8 * offset) for offset, code in chars.items())


def _table(texts: list[str], first: int) -> np.ndarray:
    """Words holding each text's characters from byte offset ``first`` on."""
    words = [_word({first + j: ord(c) for j, c in enumerate(t)}) for t in texts]
    return np.array(words, dtype="<u8")


#: word 0: sign, first digit and the point by ``10 * negative + digit``; digits 2-5 by the
#: next four digits; digit 6 by the last four digits (of which word 1 takes digits 7-9)
_SIGN_DIGIT: Final = _table([s + d + "." for s in "+-" for d in "0123456789"], 0)
_FOUR_IN_0: Final = _table([f"{i:04d}" for i in range(10_000)], 3)
_LAST_IN_0: Final = _table([f"{i:04d}"[0] for i in range(10_000)], 7)
_LAST_IN_1: Final = _table([f"{i:04d}"[1:] + "e" for i in range(10_000)], 0)
#: word 1's exponent (float32's have two digits) and comma, by ``exponent + 64``
_EXPONENT: Final = _table([f"{k:+03d}," for k in range(-64, 64)], 4)


def unit_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows divided by their norm exactly as ``_unit_vector`` divides one vector (float32
    ``sqrt(x.dot(x))``, so already-unit rows get the same last bits), and which rows are zero."""
    rows = np.ascontiguousarray(matrix, dtype=np.float32)
    squares = np.array([r.dot(r) for r in rows], dtype=np.float32)
    norms = np.sqrt(squares)
    zero = norms == 0
    unit = rows / np.where(zero, np.float32(1), norms)[:, None]
    return unit.astype(np.float32, copy=False), zero


def vector_texts(unit: np.ndarray) -> list[str]:
    """Each float32 row as ``','.join(f'{v:+.8e}' for v in row)``."""
    rows, dims = unit.shape
    if rows == 0 or dims == 0:
        return [""] * rows
    values = unit.astype(np.float64).ravel()
    m, e = _digits(np.abs(values))
    first = m // 100_000_000
    rest = m % 100_000_000
    high, low = rest // 10_000, rest % 10_000
    words = np.empty((values.size, 2), dtype="<u8")
    words[:, 0] = _SIGN_DIGIT[np.signbit(values) * 10 + first] | _FOUR_IN_0[high] | _LAST_IN_0[low]
    words[:, 1] = _LAST_IN_1[low] | _EXPONENT[e + 64]
    flat = words.tobytes().decode("ascii")
    step = dims * _WIDTH
    return [flat[i : i + step - 1] for i in range(0, rows * step, step)]  # no last comma


def _digits(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nine correctly rounded significant digits ``m`` (an integer in [1e8, 1e9), 0 for 0)
    and the decimal exponent ``e`` of each ``a >= 0``, as ``f"{a:.8e}"`` writes them."""
    clipped = np.clip(a, _EXACT_MIN, _EXACT_TOP)
    e = np.clip(np.floor(np.log10(clipped)).astype(np.int64), -4, 3)
    m = np.rint(clipped * _POW10[8 - e]).astype(np.int64)
    zero = a == 0
    # outside the exact range, or log10 rounded across a power of ten: Python's digits
    slow = ((a != clipped) | (m < 100_000_000) | (m >= 1_000_000_000)) & ~zero
    m[zero] = e[zero] = 0
    for i in np.flatnonzero(slow).tolist():
        text = f"{a[i]:.8e}"
        m[i] = int(text[0] + text[2:10])
        e[i] = int(text[11:])
    return m, e

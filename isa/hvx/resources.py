"""V66 packet rules: slots and HVX resources per resource class, and a packet-fit check.

Slot and unit assignments follow LLVM HexagonDepIICHVX.td itineraries and QEMU ext.idef
attributes (see docs/hvx.md): ALU ops (VA) may use any slot and any one of the four HVX
functional units; multiplies (VX) need slot 2 or 3 and one multiplier half; double-width
instructions take both multipliers (VX_DV) or shift+permute (VP_VS); aligned loads use slot 0/1,
the load unit and one VA unit; unaligned vmemu also occupies the permute unit and keeps slot 1
empty; stores go to slot 0.  A packet holds at most four instructions.
"""
from __future__ import annotations

from functools import lru_cache
from itertools import product

S0123 = (0, 1, 2, 3)
_VA_UNITS = ("MPY0", "MPY1", "SHIFT", "XLANE")


def _opts(slots, unit_alts):
    return tuple((frozenset(s if isinstance(s, tuple) else (s,)), frozenset(u)) for s in slots for u in unit_alts)


CLASSES = {
    "VA": _opts(S0123, [(u,) for u in _VA_UNITS]),
    "VA_DV": _opts(S0123, [("MPY0", "MPY1"), ("SHIFT", "XLANE")]),
    "VX": _opts((2, 3), [("MPY0",), ("MPY1",)]),
    "VX_DV": _opts((2, 3), [("MPY0", "MPY1")]),
    "VS": _opts(S0123, [("SHIFT",)]),
    "VP": _opts(S0123, [("XLANE",)]),
    "VP_VS": _opts(S0123, [("SHIFT", "XLANE")]),
    "LD": _opts((0, 1), [("LD", u) for u in _VA_UNITS]),
    "LDU": _opts(((0, 1),), [("LD", "XLANE")]),            # slot 0 with slot 1 kept empty
    "ST": _opts((0,), [("ST", u) for u in _VA_UNITS]),
    "STU": _opts(((0, 1),), [("ST", "XLANE")]),
    "VEXT": _opts((0,), [(u,) for u in _VA_UNITS]),
    "S_ALU": _opts(S0123, [()]),
    "S_MPY": _opts((2, 3), [()]),
    "S_LD": _opts((0, 1), [("SLD",)]) + _opts((0, 1), [("SLD2",)]),
    "S_ST": _opts((0, 1), [("SST",)]),
    "S_CR": _opts((3,), [()]),
}

MAX_PACKET = 4


@lru_cache(maxsize=4096)
def fits(classes: tuple) -> bool:
    """True when instructions of these resource classes can share one packet."""
    if len(classes) > MAX_PACKET:
        return False
    options = [CLASSES[c] for c in classes]
    for choice in product(*options):
        slots, units = set(), set()
        ok = True
        for s, u in choice:
            if slots & s or units & u:
                ok = False
                break
            slots |= s
            units |= u
        if ok:
            return True
    return False

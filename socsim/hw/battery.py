"""Phone battery: open-circuit voltage versus state of charge behind a temperature-dependent resistance.

Model (docs/modeling.md, Battery): the pack is an OCV source OCV(SoC) in series with R(T).  For a
net power P drawn at the terminals (phone load minus charger input; negative = charging) the pack
current solves  P = V_t I = (OCV - I R) I,  i.e.  I = (OCV - sqrt(OCV^2 - 4 R P)) / (2 R).
The charge counter integrates I exactly as the state of charge falls, so integrated current
equals the change of charge by construction.

Energy as a battery gauge measures it is the terminal energy, integral of V_t * I (= the phone's
consumption, what a Monsoon monitor in place of the pack reads).  The I^2 R loss inside the pack
drains charge too but never reaches the phone; it is kept separately (``loss_j``) and heats the
battery's thermal node (the engine feeds it to the thermal network, heat source "battery").

Charging: the charger draws ``charging_w`` from the wall and delivers ``charger_efficiency`` of it
(a switch-mode buck charger) to the phone and the pack; the rest heats the phone (``charger_loss_j``,
heat source "charger").  The pack takes charge at constant current until its terminal voltage
OCV + I R reaches the charge-voltage limit, then at constant voltage: the charge current is
capped at (V_charge - OCV) / R and tapers as the pack fills, and the charger delivers only what
the phone and that current take.
"""
from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from socsim.hw.battery_kernel import profile_terms, step_currents
from socsim.spec.soc import Battery

COULOMB_PER_MAH = 3.6
# Arrhenius activation temperature (E_a / R_gas, E_a ~ 20 kJ/mol) of the pack resistance: R about
# doubles from 25 C to 0 C and quadruples at -20 C, the range Li-ion impedance studies report
# (Waag, Kaebitz, Sauer, Applied Energy 102, 2013; Battery University BU-502).  Clamped to the
# cell's operating range.
R_ACTIVATION_K = 2400.0
R_TEMP_RANGE_C = (-20.0, 60.0)


@dataclass(frozen=True, slots=True)
class BatteryState:
    """Charge left and the running counters of a battery gauge.

    ``charge_out_c``: net charge that left the pack (integral of I, discharge positive);
    ``energy_out_j``: terminal energy delivered to the phone (gauge view, negative while charging);
    ``loss_j``: I^2 R heat dissipated inside the pack;
    ``charger_loss_j``: heat the charger dissipated converting what it delivered.
    """

    capacity_c: float
    charge_c: float
    charge_out_c: float = 0.0
    energy_out_j: float = 0.0
    loss_j: float = 0.0
    charger_loss_j: float = 0.0

    @staticmethod
    def initial(spec: Battery, soc: float | None = None) -> "BatteryState":
        cap = spec.capacity_mah * COULOMB_PER_MAH
        s = spec.initial_soc if soc is None else soc
        if not 0.0 <= s <= 1.0:
            raise ValueError(f"state of charge must be within 0..1, got {s}")
        return BatteryState(capacity_c=cap, charge_c=cap * s)

    @property
    def soc(self) -> float:
        """State of charge, 0..1."""
        return self.charge_c / self.capacity_c


_OCV_TABLES: dict[int, tuple[object, np.ndarray, np.ndarray]] = {}


def _ocv_table(spec: Battery) -> tuple[np.ndarray, np.ndarray]:
    """The spec's OCV table as sorted arrays, built once per spec object (the engine asks for
    it twice per batch)."""
    hit = _OCV_TABLES.get(id(spec))
    if hit is None or hit[0] is not spec.ocv_soc:
        table = sorted(spec.ocv_soc)
        hit = _OCV_TABLES[id(spec)] = (spec.ocv_soc, np.array([s for s, _ in table], float),
                                       np.array([v for _, v in table], float))
    return hit[1], hit[2]


_OCV_LISTS: dict[int, tuple[object, list[float], list[float]]] = {}


def ocv_v(spec: Battery, soc: float) -> float:
    """Open-circuit voltage at state of charge ``soc`` (linear in the spec's table, clamped):
    ``np.interp(soc, xs, ys)`` for one point, in plain floats (the engine asks twice per batch,
    and numpy's call costs more than the arithmetic).  The same branches and operations as
    numpy's ``arr_interp``: below the first point the first value, at or above the last the
    last value, on a point its value, else ``slope * (soc - x[j]) + y[j]`` with ``slope =
    (y[j+1] - y[j]) / (x[j+1] - x[j])``; tests/hw/test_battery_ocv.py checks it against np.interp."""
    hit = _OCV_LISTS.get(id(spec))
    if hit is None or hit[0] is not spec.ocv_soc:
        xs_a, ys_a = _ocv_table(spec)
        hit = _OCV_LISTS[id(spec)] = (spec.ocv_soc, xs_a.tolist(), ys_a.tolist())
    _, xs, ys = hit
    return _interp1(float(soc), xs, ys)


def _interp1(x: float, xs: list[float], ys: list[float]) -> float:
    """numpy's ``interp`` at one point (``xs`` ascending, at least one point; NaN gives NaN)."""
    if len(xs) == 1:
        return ys[0]
    if x != x:
        return x
    if x < xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    j = bisect_right(xs, x) - 1
    if xs[j] == x:
        return ys[j]
    slope = (ys[j + 1] - ys[j]) / (xs[j + 1] - xs[j])
    r = slope * (x - xs[j]) + ys[j]
    if r != r:
        r = slope * (x - xs[j + 1]) + ys[j + 1]
        if r != r and ys[j] == ys[j + 1]:
            r = ys[j]
    return r


def internal_resistance_ohm(spec: Battery, temp_c: float) -> float:
    """Pack resistance at ``temp_c``: the spec's 25 C value scaled by an Arrhenius factor."""
    t = min(max(temp_c, R_TEMP_RANGE_C[0]), R_TEMP_RANGE_C[1]) + 273.15
    return spec.internal_resistance_ohm * math.exp(R_ACTIVATION_K * (1.0 / t - 1.0 / 298.15))


def pack_current_a(ocv: float, r_ohm: float, net_w: float) -> float:
    """Current (A, discharge positive) that delivers ``net_w`` at the terminals of OCV behind R.

    Beyond the pack's maximum power OCV^2 / 4R the current saturates at OCV / 2R (brown-out:
    the terminal voltage has fallen to OCV / 2 and the engine should treat the phone as off).
    """
    disc = ocv * ocv - 4.0 * r_ohm * net_w
    if disc <= 0.0:
        return ocv / (2.0 * r_ohm)
    # Numerically stable root of R I^2 - OCV I + P = 0 (no cancellation at small P).
    return 2.0 * net_w / (ocv + math.sqrt(disc))


def charger_supply_w(spec: Battery, charging_w: float) -> float:
    """Most the charger can deliver to the phone and the pack from ``charging_w`` at the wall."""
    return charging_w * spec.charger_efficiency


def cv_limit_a(spec: Battery, ocv: float, r_ohm: float) -> float:
    """Largest charge current (A, >= 0) the constant-voltage phase allows at ``ocv``."""
    return max(spec.charge_voltage_v - ocv, 0.0) / r_ohm


def battery_step(spec: Battery, state: BatteryState, power_w: float, dt_s: float, temp_c: float,
                 charging_w: float = 0.0, profile: tuple[np.ndarray, np.ndarray] | None = None
                 ) -> tuple[BatteryState, float, float]:
    """Advance the pack by ``dt_s`` with the phone drawing ``power_w`` and a charger drawing
    ``charging_w`` from the wall (it delivers :func:`charger_supply_w` of it; the charge current
    is capped by :func:`cv_limit_a`).

    ``profile``: the load within the step as (power W, seconds) pieces whose time-weighted mean is
    ``power_w``.  Each piece then draws the current of its own power (the current is convex in
    the power: the mean power's current would undercount the charge, and the gauge energy
    V x I would fall short of the energy drawn).

    Returns ``(new_state, current_a, terminal_v)``: current discharge-positive, both averaged over the
    step (midpoint rule in state of charge; exact in charge).  The pack stops at empty and at full
    (a full pack takes no charge; the charger then only feeds the phone).
    """
    if dt_s < 0:
        raise ValueError(f"dt_s must be >= 0, got {dt_s}")
    supply_w = charger_supply_w(spec, charging_w)
    net_w = power_w - supply_w
    if dt_s == 0.0:
        r = internal_resistance_ohm(spec, temp_c)
        ocv = ocv_v(spec, state.soc)
        i = max(pack_current_a(ocv, r, net_w), -cv_limit_a(spec, ocv, r))
        if (i < 0.0 and state.charge_c >= state.capacity_c) or (i > 0.0 and state.charge_c <= 0.0):
            i = 0.0                      # a full pack takes no charge, an empty one gives none
        return state, i, ocv - i * r
    # r = internal_resistance_ohm(spec, temp_c); the OCV at the state of charge, the current then,
    # the midpoint state of charge, the OCV there, cv_limit_a and pack_current_a there: in one
    # compiled call (socsim.hw.battery_kernel.step_currents; the same operations as these
    # functions; tests/hw/test_battery_kernel.py)
    xs, ys = _ocv_table(spec)
    r, ocv, i_cv, i = step_currents(float(spec.internal_resistance_ohm), R_TEMP_RANGE_C[0], R_TEMP_RANGE_C[1],
                                    R_ACTIVATION_K, float(temp_c), xs, ys, float(state.soc),
                                    float(state.capacity_c), float(net_w), float(dt_s),
                                    float(spec.charge_voltage_v))
    energy_j = loss_j = None
    if profile is not None and len(profile[0]) > 1:   # one piece: its power is the mean
        pw, pdt = np.asarray(profile[0], float), np.asarray(profile[1], float)
        total = float(np.add.reduce(pdt))   # (pdt.sum(), without the method wrapper)
        if total > 0.0:
            # the pieces' currents and energy/loss factors in one compiled call (socsim.hw.battery_kernel)
            cur, term, sq = profile_terms(ocv, r, pw, supply_w, i_cv)
            i = float(cur @ pdt) / total
            energy_j = float(term @ pdt) * dt_s / total
            loss_j = float(sq @ pdt) * r * dt_s / total
    charge = state.charge_c - i * dt_s
    if charge < 0.0:                     # empty: the pack gives what it has left
        i, charge = state.charge_c / dt_s, 0.0
    elif charge > state.capacity_c:      # full: charging stops
        i, charge = (state.charge_c - state.capacity_c) / dt_s, state.capacity_c
    terminal_v = ocv - i * r
    if energy_j is None or charge in (0.0, state.capacity_c):
        energy_j = terminal_v * i * dt_s
        loss_j = i * i * r * dt_s
    charger_loss_j = 0.0
    if charging_w > 0.0:
        # what the charger delivered: the phone's energy less what the pack gave (or plus what it took)
        delivered_j = min(max(power_w * dt_s - energy_j, 0.0), supply_w * dt_s)
        charger_loss_j = delivered_j * (1.0 / spec.charger_efficiency - 1.0)
    new = BatteryState(capacity_c=state.capacity_c, charge_c=charge,
                       charge_out_c=state.charge_out_c + i * dt_s,
                       energy_out_j=state.energy_out_j + energy_j,
                       loss_j=state.loss_j + loss_j,
                       charger_loss_j=state.charger_loss_j + charger_loss_j)
    return new, i, terminal_v


def battery_counters(state: BatteryState, current_a: float, terminal_v: float) -> dict[str, float]:
    """The counters Android exposes (power_supply / BatteryManager, Perfetto ``batt.*`` tracks).

    ``batt.current_ua`` follows BatteryManager.BATTERY_PROPERTY_CURRENT_NOW: positive while the
    battery charges, negative while it discharges.
    """
    return {
        "batt.charge_uah": state.charge_c / COULOMB_PER_MAH * 1e3,
        "batt.capacity_pct": 100.0 * state.soc,
        "batt.current_ua": -current_a * 1e6,
        "batt.voltage_mv": terminal_v * 1e3,
    }


def piece_currents(ocv: float, r_ohm: float, net_w: np.ndarray) -> np.ndarray:
    """:func:`pack_current_a` of each net power in ``net_w`` (vectorised)."""
    disc = ocv * ocv - 4.0 * r_ohm * net_w
    if np.minimum.reduce(disc) > 0.0:   # (disc.min())   # the usual case: every piece within the pack's maximum power
        return 2.0 * net_w / (ocv + np.sqrt(disc))
    root = np.sqrt(np.maximum(disc, 0.0))
    return np.where(disc > 0.0, 2.0 * net_w / (ocv + root), ocv / (2.0 * r_ohm))


def step_profile(spec: Battery, after: BatteryState, current_a: float, terminal_v: float, temp_c: float,
                 power_w: np.ndarray, dt_s: np.ndarray, charging_w: float | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Current and terminal voltage over each piece of a :func:`battery_step` whose load varied
    within the step (``power_w`` over ``dt_s``; the step drew their time-weighted mean).

    Each piece draws the pack current of its own power, I = 2P / (OCV + sqrt(OCV^2 - 4 R P)), at
    the step's OCV (its state of charge moves by ~1e-5 in a batch), shifted by the same small
    amount on every piece so that the pieces' charge is the step's exactly (I is convex in P, so
    the mean of the pieces' currents is a little above the current of the mean power).  A gauge
    reading per sample that follows the power drawn then and adds up to the charge counter.  A
    step that emptied or filled the pack (current set by the limit) stays flat.  ``after``,
    ``current_a`` and ``terminal_v`` are what the step returned.
    """
    power_w = np.asarray(power_w, float)
    dt_s = np.asarray(dt_s, float)
    total_s = float(dt_s.sum())
    limited = after.charge_c <= 0.0 or after.charge_c >= after.capacity_c
    if total_s <= 0.0 or len(power_w) == 0 or limited:
        return np.full(len(power_w), current_a), np.full(len(power_w), terminal_v)
    r = internal_resistance_ohm(spec, temp_c)
    ocv = terminal_v + current_a * r
    if charging_w is not None:   # the step drew these very pieces (battery_step's profile)
        net_w = power_w - charger_supply_w(spec, charging_w)
    else:  # the step's (V_t I) plus the piece's deviation from the mean
        net_w = terminal_v * current_a + power_w - float((power_w * dt_s).sum()) / total_s
    cur = np.maximum(piece_currents(ocv, r, net_w), -cv_limit_a(spec, ocv, r))
    cur = cur + (current_a - float((cur * dt_s).sum()) / total_s)
    return cur, ocv - cur * r


def counter_columns(charge_c: np.ndarray, capacity_c: float, current_a: np.ndarray,
                    terminal_v: np.ndarray) -> np.ndarray:
    """The :func:`battery_counters` of many samples at once, one row each, in that order."""
    charge_c = np.asarray(charge_c, float)
    return np.column_stack([charge_c / COULOMB_PER_MAH * 1e3, 100.0 * (charge_c / capacity_c),
                            -np.asarray(current_a, float) * 1e6, np.asarray(terminal_v, float) * 1e3])

"""The compiled scan of the governor's quiet polls (``ThrottleGovernor.quiet_polls``, what the
engine's poll loop runs) decides exactly as :meth:`ThrottleGovernor.update` poll by poll: the
same states, the same polls skipped, and it stops at the first poll that crosses a trip or
moves a zone's steps."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from socsim.hw.thermal import ThrottleGovernor, ZoneState
from socsim.spec import load_soc


@pytest.fixture(scope="module")
def gov():
    soc = load_soc("sd865")
    return ThrottleGovernor(soc.thermal, soc.cpu.clusters, gpu=soc.gpu)


POLL_S = 0.25


def reference(gov, state, times, temps, present, hot, idle0, last_poll_s):
    """The engine's poll loop before the scan: update() at every poll it makes."""
    names = [z.name for z in gov.spec.zones]
    idle = idle0 and not any(z.tripped for z in state.zones)
    states = []
    for j, te in enumerate(times):
        if idle and not hot[j]:
            states.append(state)
            continue
        if te - last_poll_s >= POLL_S - 1e-9:
            last_poll_s = te
            zt = {n: float(temps[j, k]) for k, n in enumerate(names) if present[k]}
            state = gov.update(state, zt, te).state
            idle = idle0 and not any(z.tripped for z in state.zones)
        states.append(state)
    return states, last_poll_s


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_scan_matches_update_poll_by_poll(gov, data):
    nz = len(gov.spec.zones)
    n = data.draw(st.integers(1, 40))
    # readings from a small set around the trips, so that equal and repeated readings (steady,
    # neither falling nor rising) and readings exactly at a trip or its hysteresis occur
    base = data.draw(st.sampled_from([38.0, 44.0, 55.0, 59.0, 88.0, 90.0, 93.0, 95.0]))
    steps_c = st.sampled_from([-3.0, -2.0, -1.0, 0.0, 0.0, 1.0, 2.0]) | st.floats(-3.0, 3.0)
    temps = np.array([[base + data.draw(steps_c) for _ in range(nz)] for _ in range(n)])
    # polls every 250 ms, some a little early (the engine skips those)
    jitter = [data.draw(st.sampled_from([0.0, 0.0, -0.1])) for _ in range(n)]
    times = np.array([POLL_S * (j + 1) + jitter[j] for j in range(n)])
    present = np.array([data.draw(st.booleans()) or k < 3 for k in range(nz)])
    hot = np.array([data.draw(st.booleans()) for _ in range(n)])
    idle = data.draw(st.booleans())
    start = gov.initial_state()
    if data.draw(st.booleans()):   # a warm start: some trips crossed, steps taken, a last reading
        zs = []
        for k, z in enumerate(gov.spec.zones):
            tr = data.draw(st.integers(0, len(z.trips_c)))
            zs.append(ZoneState(tr, data.draw(st.integers(0, gov._uppers[k][tr])),
                                data.draw(st.none() | st.just(base) | st.floats(30.0, 100.0)), 0.0))
        start = type(start)(zones=tuple(zs))
    ref_states, ref_last = reference(gov, start, times, temps, present, hot, idle, 0.0)
    idle_start = idle and not any(z.tripped for z in start.zones)   # as the engine decides it
    state, j, last = gov.quiet_polls(start, times, temps, present, hot, 0, idle_start, 0.0, POLL_S)
    if j >= 0:
        # every poll before j changed nothing but readings; poll j changes a trip or steps
        before = ref_states[j - 1] if j else start
        assert state == before
        assert [(z.tripped, z.steps) for z in ref_states[j].zones] != [(z.tripped, z.steps) for z in before.zones]
    # the engine's loop: the scan, update() at each poll it stops at, the scan again from the next
    names = [z.name for z in gov.spec.zones]
    state, j, last = start, 0, 0.0
    while True:
        cur_idle = idle and not any(z.tripped for z in state.zones)
        state, j, last = gov.quiet_polls(state, times, temps, present, hot, j, cur_idle, last, POLL_S)
        if j < 0:
            break
        last = float(times[j])
        state = gov.update(state, {n: float(temps[j, k]) for k, n in enumerate(names) if present[k]}, last).state
        assert state == ref_states[j]
        j += 1
    assert state == ref_states[-1]
    assert last == ref_last


def test_no_reading_yet_is_not_falling(gov):
    """A zone with no reading (last_temp_c None) is not falling: a crossed trip takes a step."""
    zs = tuple(ZoneState(1 if k == 0 else 0, 0, None, -math.inf) for k in range(len(gov.spec.zones)))
    state = type(gov.initial_state())(zones=zs)
    temps = np.full((1, len(zs)), 40.0)
    temps[0, 0] = 91.0
    present = np.ones(len(zs), bool)
    _, j, _ = gov.quiet_polls(state, np.array([0.25]), temps, present, np.ones(1, bool), 0, False,
                              -math.inf, POLL_S)
    assert j == 0
    assert gov.update(state, {z.name: 40.0 if k else 91.0 for k, z in enumerate(gov.spec.zones)}, 0.25).state \
        .zones[0].steps == 1


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_scan_over_pieces_matches_scan_over_gathered_polls(gov, data):
    """``quiet_polls_pieces`` (the engine's: the part's pieces, their readings and which are
    polls, hot flags from the alert levels) decides as ``quiet_polls`` given the polls' rows
    gathered by zone and their hot flags (what the engine's poll loop used to build), and leaves
    the same state: the zones' readings and poll times, built when asked (``scanned``)."""
    nz = len(gov.spec.zones)
    n = data.draw(st.integers(1, 40))
    base = data.draw(st.sampled_from([38.0, 44.0, 55.0, 59.0, 88.0, 90.0, 93.0, 95.0]))
    steps_c = st.sampled_from([-3.0, -1.0, 0.0, 0.0, 1.0, 2.0]) | st.floats(-3.0, 3.0)
    # the zones read: a subset of the spec's, in spec order; their columns in the readings
    present = np.array([data.draw(st.booleans()) or k < 3 for k in range(nz)])
    cols = np.full(nz, -1, np.int64)
    cols[present] = np.arange(int(present.sum()))
    zt = np.array([[base + data.draw(steps_c) for _ in range(int(present.sum()))] for _ in range(n)])
    ends = np.cumsum([data.draw(st.sampled_from([0.05, 0.1, 0.15, 0.25])) for _ in range(n)])
    polls = np.array([data.draw(st.booleans()) for _ in range(n)])
    alert_hot = np.array([base + data.draw(st.sampled_from([-2.0, 0.0, 1.0, 5.0])) for _ in range(zt.shape[1])])
    idle = data.draw(st.booleans())
    start = data.draw(st.integers(0, n - 1))
    last0 = data.draw(st.sampled_from([-math.inf, 0.0, 0.1]))
    state0 = gov.initial_state()
    if data.draw(st.booleans()):
        zs = []
        for k, z in enumerate(gov.spec.zones):
            tr = data.draw(st.integers(0, len(z.trips_c)))
            zs.append(ZoneState(tr, data.draw(st.integers(0, gov._uppers[k][tr])),
                                data.draw(st.none() | st.just(base)), 0.0))
        state0 = type(state0)(zones=tuple(zs))
    # the reference: the polls' rows gathered, as the engine's loop did before the pieces' scan
    at = np.flatnonzero(polls)
    at_from = int(np.searchsorted(at, start))
    zt_at = zt[at]
    hot = np.asarray((zt_at >= alert_hot).any(axis=1), dtype=np.bool_)
    gz = np.zeros((len(at), nz))
    gz[:, present] = zt_at
    ref_state, ref_j, ref_last = gov.quiet_polls(state0, np.ascontiguousarray(ends[at]), gz, present, hot,
                                                 at_from, idle, last0, POLL_S)
    j, last = gov.quiet_polls_pieces(state0, ends, zt, polls, alert_hot, cols, start, idle, last0, POLL_S)
    assert j == (int(at[ref_j]) if ref_j >= 0 else -1)
    assert last == ref_last
    assert gov.scanned(state0) == ref_state

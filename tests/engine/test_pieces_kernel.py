"""The compiled pieces of a part (socsim.engine.pieces_kernel) are numpy's, bit for bit: the
engine's outputs are byte-identical under --deterministic, so the kernel may not move one ulp."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings, strategies as st

from socsim.engine.pieces_kernel import pieces, pieces_ref, poll_grid, poll_grid_ref, sample_offsets

pos = st.floats(0.0, 5.0, allow_nan=False, allow_infinity=False)


@st.composite
def templates(draw):
    n_seg = draw(st.integers(1, 12))
    lens = draw(st.lists(st.floats(0.0, 0.5, allow_nan=False), min_size=n_seg, max_size=n_seg))
    edges = np.concatenate(([0.0], np.cumsum(lens)))
    r = draw(st.integers(1, 9))
    inc = np.array(draw(st.lists(st.floats(0.0, 3.0, allow_nan=False), min_size=n_seg * r, max_size=n_seg * r)))
    cum = np.vstack([np.zeros(r), np.cumsum(inc.reshape(n_seg, r), axis=0)])
    return edges, cum, r


@settings(max_examples=300, deadline=None)
@given(tpl=templates(), ends=st.lists(pos, min_size=1, max_size=15), a=st.one_of(st.just(0.0), pos),
       data=st.data())
def test_pieces_match_numpy(tpl, ends, a, data):
    edges, cum, r = tpl
    duration = float(edges[-1])
    offs = np.sort(np.array(ends))
    cum0 = np.array(data.draw(st.lists(pos, min_size=r, max_size=r)))
    static = np.array(data.draw(st.lists(st.floats(0.0, 5000.0, allow_nan=False), min_size=r, max_size=r)))
    want = pieces_ref(offs, a, edges, cum, duration, cum0, static)
    got = pieces(offs, a, edges, cum, duration, cum0, static)
    for w, g in zip(want, got):
        assert w.shape == g.shape and w.tobytes() == g.tobytes()


@settings(max_examples=300, deadline=None)
@given(t0=st.floats(0.0, 1e5, allow_nan=False), first=st.floats(0.0, 2.0, allow_nan=False),
       sample=st.floats(1e-3, 1.0, allow_nan=False), n=st.integers(0, 30), dur=st.floats(0.0, 10.0, allow_nan=False))
def test_sample_offsets_match_numpy(t0, first, sample, n, dur):
    nxt = t0 + first
    grid = nxt + sample * np.arange(n)
    offs = np.empty(n + 1)
    np.subtract(grid, t0, out=offs[:-1])
    offs[-1] = dur
    offs = np.minimum(np.maximum(offs, 0.0), dur)
    g, o = sample_offsets(t0, nxt, sample, n, dur)
    assert g.tobytes() == grid.tobytes() and o.tobytes() == offs.tobytes()


def test_offsets_before_the_part_clip_to_zero():
    g, o = sample_offsets(10.0, 9.5, 0.25, 4, 0.4)
    assert g.tolist() == [9.5, 9.75, 10.0, 10.25]
    assert o.tolist() == [0.0, 0.0, 0.0, 0.25, 0.4] and not math.isnan(o.sum())


@settings(max_examples=400, deadline=None)
@given(t0=st.floats(0.0, 1e4, allow_nan=False), first=st.floats(0.0, 1.0, allow_nan=False),
       sample=st.floats(0.01, 1.0, allow_nan=False), n=st.integers(0, 20),
       dur=st.floats(1e-6, 8.0, allow_nan=False), ps=st.sampled_from([0.25, 0.1, 1.0, 0.3, 0.05]),
       aligned=st.booleans())
def test_poll_grid_matches_numpy(t0, first, sample, n, dur, ps, aligned):
    if aligned:   # samples and polls on one clock: coinciding ends
        t0, first, sample = round(t0 / ps) * ps, ps, ps
    _, offs = sample_offsets(t0, t0 + first, sample, n, dur)
    t1 = t0 + dur
    k0 = math.floor((t0 + 1e-12) / ps) + 1
    k1 = math.floor((t1 + 1e-12) / ps)
    if k1 < k0:
        return
    want = poll_grid_ref(offs, ps * np.arange(k0, k1 + 1) - t0, dur)
    got = poll_grid(offs, ps, k0, k1, t0, dur)
    for w, g in zip(want, got):
        assert w.shape == g.shape and w.tobytes() == g.tobytes(), (w, g)


def test_clips_are_numpys_on_signed_zeros_and_nan():
    from socsim.engine.pieces_kernel import _max, _min
    vals = [0.0, -0.0, 1.5, -1.5, math.nan, math.inf, -math.inf]
    for v in vals:
        for m in vals:
            for ours, theirs in ((_max, np.maximum), (_min, np.minimum)):
                want = theirs(np.array([v]), m)
                got = np.array([ours(v, m)])
                assert want.tobytes() == got.tobytes(), (ours, v, m)


def test_engine_passes_sample_offsets_a_float_start(tmp_path, monkeypatch):
    """The engine hands ``sample_offsets`` its part's start as a float, the first part's (0) too:
    an int there compiled the kernel a second time on the first run (docs/performance.md,
    First run).  The values are the same either way (int64 -> float64 is exact below 2**53)."""
    from engine_runs import lenet, run

    from socsim.engine import accounting

    seen = []

    def recording(t0, *rest):
        seen.append(type(t0))
        return sample_offsets(t0, *rest)

    monkeypatch.setattr(accounting, "sample_offsets", recording)
    run(tmp_path, lenet(batches=2, batch_size=64))
    assert seen and set(seen) == {float}


def _peaks_numpy(temps, zt, peak_c, peaks: dict, names):
    """Accounting._peaks' numpy form: the reference for the compiled part_peaks."""
    peak_c = max(peak_c, float(np.maximum.reduce(temps, axis=None)))
    zmax = np.maximum.reduce(zt, axis=0).tolist() if len(zt) else []
    for z, v in zip(names, zmax):
        if v > peaks.get(z, -math.inf):
            peaks[z] = v
    return peak_c


reading = st.one_of(st.sampled_from([0.0, -0.0, 25.0, 39.5, -3.0, math.nan]), st.floats(-20.0, 120.0))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.integers(1, 12), m=st.integers(1, 9), nz=st.integers(0, 8))
def test_part_peaks_match_numpy(data, n, m, nz):
    """The compiled peaks are the numpy form's, bit for bit (a zero, whose sign numpy's maximum
    may give otherwise, is left to the numpy form), and a NaN reading raises no peak."""
    from socsim.engine.pieces_kernel import part_peaks

    temps = np.array(data.draw(st.lists(reading, min_size=n * m, max_size=n * m))).reshape(n, m)
    zt = np.array(data.draw(st.lists(reading, min_size=n * nz, max_size=n * nz))).reshape(n, nz)
    names = [f"z{k}" for k in range(nz)]
    start = data.draw(st.lists(st.floats(-30.0, 100.0), min_size=nz, max_size=nz))
    peak0 = data.draw(st.sampled_from([-math.inf, 0.0, 30.0]))
    peaks = dict(zip(names, start))
    arr = np.array(start, float)
    new, exact, moved = part_peaks(temps, zt, peak0, arr)
    ref = _peaks_numpy(temps, zt, peak0, peaks, names)
    if not exact:   # nothing written: the caller takes the numpy form
        assert arr.tolist() == start and new == peak0
        assert 0.0 in temps.ravel().tolist() + zt.ravel().tolist()
        return
    assert np.array([new]).tobytes() == np.array([ref]).tobytes()
    assert arr.tobytes() == np.array([peaks[z] for z in names], float).tobytes()
    assert moved == (arr.tolist() != start)

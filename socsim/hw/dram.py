"""DRAM as a shared resource: bandwidth and latency from the spec, split among concurrent users.

Units that are busy at the same time (CPU threads, the DSP, the GPU) share the channel.  Each
sharer is limited by its own memory-level parallelism (Little's law: bytes in flight / latency)
and all of them together by the achievable bandwidth, which interleaved request streams lower
further: every extra stream breaks the row-buffer locality of the others (row misses cost
precharge + activate; Mutlu & Moscibroda, "Stall-Time Fair Memory Access Scheduling", MICRO 2007,
measure 10-40% lower DRAM throughput with 4 co-running streams than with one).
"""
from __future__ import annotations

from dataclasses import dataclass

from socsim.spec.soc import Dram

# Fraction of achievable bandwidth lost per additional concurrent request stream (row-buffer
# interference), capped below.  A stream is one sequential address walk: a thread reading its
# input and writing its output is two (and reads and writes to DRAM also pay bus turnaround).
# 0.08 per stream loses 24% with 4 streams, inside the 10-40% cited above.  The floor keeps the
# extrapolation from going to zero beyond what the citation measures: assumption, 0.45 of the
# achievable bandwidth (interleaved streams still hit an open row for a line or more per request,
# and bank-level parallelism hides part of the precharge/activate).  The linear rule reaches it at
# 8 streams (0.44 -> 0.45), so it changes nothing below 8 streams and 2% at 8 (4 threads each
# reading and writing); it binds for hybrid 8-core plans and foreground traffic on top.  (It was
# first written with Swan's depthwise observation in view, a workload-level result no constant
# should be fitted to; Swan's 4-core choices run at 8 streams or fewer, where it moves the
# bandwidth by at most 2%.)
ROW_INTERFERENCE_PER_STREAM = 0.08
MIN_INTERFERENCE_FACTOR = 0.45

# Bytes a sharer keeps in flight (outstanding line fills incl. hardware prefetch), by kind.
# cpu-big: Cortex-A77/A78/X1 L2 tracks on the order of 32-48 outstanding transactions
# (Arm TRMs, L2 memory system); cpu-little: Cortex-A55 L2 ~ 8-16 (A55 TRM); dsp: one demand
# miss per HVX context in flight (in-order threads; hw:hexagon.memory ddr_access_ns=250 is per
# access) -- the DSP's figure is per context, see socsim.hw.dsp; gpu: assumption, 256 lines, chosen
# not to bind: a GPU hides DRAM latency with many warps in flight, and 16 KiB over a ~300 ns loaded
# latency is ~55 GB/s, above every spec's DRAM peak, so the GPU's share is set by the DRAM, not by
# Little's law (any value from ~128 lines up gives the same results on the specs here).
BYTES_IN_FLIGHT = {"cpu-big": 32 * 64, "cpu-little": 12 * 64, "dsp": 128, "gpu": 256 * 64}


@dataclass(frozen=True, slots=True)
class DramShare:
    """What one sharer gets: bandwidth (bytes/s) and latency (s)."""

    bandwidth_bps: float
    latency_s: float


# Background traffic (another master, e.g. a foreground app's CPU and GPU, using ``background``
# bytes/s of the channel): it is one more interleaved stream, and it takes its bandwidth from
# what training gets, but the memory controller's arbitration leaves each of the two at least an
# even split of the channel (fair scheduling among masters: Mutlu & Moscibroda, MICRO 2007; an
# assumption for phone memory controllers, whose QoS arbitration is not documented).
MIN_SHARE_UNDER_BACKGROUND = 0.5


def achievable_bps(dram: Dram, streams: int = 1, background_bps: float = 0.0, clock_scale: float = 1.0) -> float:
    """Total bandwidth the channel delivers to ``streams`` interleaved request streams, while
    other masters take ``background_bps`` of it; ``clock_scale`` is the DDR clock over the clock
    at which ``dram.bandwidth_gbs`` holds (:func:`uncore_dram`)."""
    streams = max(1, int(streams)) + (1 if background_bps > 0 else 0)
    factor = max(MIN_INTERFERENCE_FACTOR, 1.0 - ROW_INTERFERENCE_PER_STREAM * (streams - 1))
    total = dram.bandwidth_gbs * 1e9 * dram.achievable_fraction * factor * clock_scale
    if background_bps <= 0:
        return total
    return max(total - background_bps, MIN_SHARE_UNDER_BACKGROUND * total)


def sharer_limit_bps(dram: Dram, kind: str, latency_ns: float | None = None) -> float:
    """One sharer's own ceiling from the bytes it keeps in flight (Little's law)."""
    lat = (latency_ns or dram.latency_ns) * 1e-9
    return BYTES_IN_FLIGHT[kind] / lat


def share(dram: Dram, kind: str, sharers: dict[str, int] | None = None, streams: int | None = None,
          background_bps: float = 0.0, latency_ns: float | None = None, clock_scale: float = 1.0) -> DramShare:
    """Bandwidth one sharer of ``kind`` gets while ``sharers`` (kind -> count, itself included)
    are busy together: the channel is split evenly among sharers, each capped by its own MLP.
    ``streams`` is the number of interleaved address streams behind the row-buffer interference
    (default: one per sharer); ``background_bps`` is what other masters take meanwhile;
    ``latency_ns`` and ``clock_scale`` the loaded latency and DDR clock the uncore governors set
    (:func:`uncore_dram`; default: the spec's, at the top DDR clock)."""
    sharers = dict(sharers or {kind: 1})
    sharers.setdefault(kind, 1)
    n = sum(sharers.values())
    total = achievable_bps(dram, streams or n, background_bps, clock_scale)
    # water-filling: sharers below the fair share keep their limit, the rest split the remainder
    limits = sorted((sharer_limit_bps(dram, k, latency_ns) for k, c in sharers.items() for _ in range(c)))
    left, remaining = total, n
    fair = total / n
    for lim in limits:
        fair = left / remaining
        if lim >= fair:
            break
        left -= lim
        remaining -= 1
    mine = min(sharer_limit_bps(dram, kind, latency_ns), fair if remaining else total)
    return DramShare(bandwidth_bps=mine, latency_s=(latency_ns or dram.latency_ns) * 1e-9)


def uncore_dram(dram: Dram, uncore, ddr_mhz: float | None) -> tuple[float, float]:
    """(loaded latency in ns, bandwidth scale) of the DRAM at DDR clock ``ddr_mhz`` as the
    SoC's memory-latency governors vote it (``uncore``: a socsim.spec.soc.Uncore, or None:
    the spec's latency and full bandwidth).  ``dram.latency_ns`` holds at ``ddr_peak_mhz``; of
    it, ``dram_ddr_cycles`` DDR clocks (read latency, burst, controller pipeline) stretch as the
    clock drops and the rest (core, DSU, NoC, system cache, tRCD/tRP, which are in ns) does not.
    Bandwidth is proportional to the DDR clock (a DDR bus moves a fixed width per clock edge)."""
    if uncore is None or ddr_mhz is None:
        return dram.latency_ns, 1.0
    peak = uncore.ddr_peak_mhz
    f = min(ddr_mhz, peak)
    cycles_ns = uncore.dram_ddr_cycles * 1e3
    lat = dram.latency_ns - cycles_ns / peak + cycles_ns / f
    return lat, f / peak


def energy_j(dram: Dram, nbytes: float) -> float:
    """DRAM access energy of moving ``nbytes`` (spec energy_pj_per_byte)."""
    return nbytes * dram.energy_pj_per_byte * 1e-12

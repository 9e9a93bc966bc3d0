"""Naming CPU core sets and operating points the way the workload YAML does (schedulers, the
engine and the workload checks share these)."""
from __future__ import annotations

import math
from typing import Any

from socsim.errors import InputError
from socsim.spec.soc import Cluster, SocSpec, opp_range


def big_cores(soc: SocSpec) -> list[int]:
    """Cores of every cluster but the first (lowest-capacity) one, in id order."""
    if len(soc.cpu.clusters) == 1:
        return list(soc.cpu.clusters[0].core_ids)
    return sorted(i for c in soc.cpu.clusters[1:] for i in c.core_ids)


def little_cores(soc: SocSpec) -> list[int]:
    return sorted(soc.cpu.clusters[0].core_ids)


def resolve_cores(soc: SocSpec, spec: str | list[int] | tuple[int, ...], field: str = "cpu.cores") -> tuple[int, ...]:
    """``big2`` -> (4, 5) on sd865; a list of ids is checked against the SoC; a string of digits
    names one core per digit as Swan writes its choices (``"456"`` -> (4, 5, 6)).  Anything else
    (an unknown name, ``big0``, an empty or repeating list) is an InputError naming ``field``."""
    all_ids = sorted(i for c in soc.cpu.clusters for i in c.core_ids)
    shown = spec if isinstance(spec, str) else list(spec) if isinstance(spec, (list, tuple)) else spec
    if isinstance(spec, str) and spec.isascii() and spec.isdigit():
        spec = [int(ch) for ch in spec]
    if isinstance(spec, (list, tuple)):
        if not spec:
            raise InputError("core list is empty", field=field, value=shown)
        if any(isinstance(c, bool) or not isinstance(c, int) for c in spec):
            raise InputError("core ids must be integers", field=field, value=shown)
        if len(set(spec)) != len(spec):
            raise InputError("core ids must be distinct", field=field, value=shown)
        bad = [c for c in spec if c not in all_ids]
        if bad:
            raise InputError(f"{soc.name} has cores {all_ids}", field=field, value=shown)
        return tuple(sorted(spec))
    if not isinstance(spec, str):
        raise InputError("a core set is a name (big2, little4, hybrid8, ...) or a list of core ids",
                         field=field, value=spec)
    if spec in ("hybrid8", "all"):
        return tuple(all_ids)
    if spec == "prime1":
        return (max(soc.cpu.clusters[-1].core_ids),)
    for prefix, pool in (("big", big_cores(soc)), ("little", little_cores(soc))):
        rest = spec[len(prefix):]
        if spec.startswith(prefix) and rest.isascii() and rest.isdigit() and int(rest) > 0:
            n = int(rest)
            if n > len(pool):
                raise InputError(f"{soc.name} has only {len(pool)} {prefix} cores {pool}", field=field, value=spec)
            return tuple(pool[:n])
    raise InputError("unknown core set; expected big<N>, little<N>, prime1, hybrid8, all, a list of core ids "
                     "or core ids as digits ('456')", field=field, value=spec)


def is_core_set_name(spec: str) -> bool:
    """Whether ``spec`` is well-formed as a core-set name (whatever the SoC)."""
    if spec in ("hybrid8", "all", "prime1") or spec.isascii() and spec.isdigit():
        return True
    for prefix in ("big", "little"):
        rest = spec[len(prefix):]
        if spec.startswith(prefix) and rest.isascii() and rest.isdigit() and int(rest) > 0:
            return True
    return False


UNKNOWN_CORE_SET = ("unknown core set; expected big<N>, little<N>, prime1, hybrid8, all, a list of core ids "
                    "or core ids as digits ('456')")


def core_set_error(value: Any) -> str | None:
    """Why ``value`` (a core-set name or a list of core ids) is no core set on any SoC, or None.

    For the options models of the schedulers, so that ``socsim validate`` catches a malformed core
    set without a SoC; whether the SoC has the cores is checked when the scheduler plans."""
    if isinstance(value, str):
        if not value.isascii() or not is_core_set_name(value):
            return UNKNOWN_CORE_SET
        if value.isascii() and value.isdigit() and len(set(value)) != len(value):
            return "core ids must be distinct (each digit names one core)"
        return None
    if isinstance(value, (list, tuple)):
        if not value:
            return "core list is empty"
        if any(isinstance(c, int) and not isinstance(c, bool) and c < 0 for c in value):
            return "core ids must not be negative"
        if len(set(value)) != len(value):
            return "core ids must be distinct"
    return None


def clusters_of(soc: SocSpec, cores: tuple[int, ...]) -> list[Cluster]:
    return [c for c in soc.cpu.clusters if any(i in c.core_ids for i in cores)]


def pick_opp(cluster: Cluster, setting: str | float, cap_mhz: float | None = None) -> float:
    """max|mid|min or a frequency in MHz -> the highest OPP not above it (and not above the cap)."""
    freqs = [o.freq_mhz for o in cluster.opps]
    f = opp_for(freqs, setting)
    if cap_mhz is not None and f > cap_mhz:
        below = [x for x in freqs if x <= cap_mhz + 1e-6]
        f = below[-1] if below else freqs[0]
    return f


def opp_for(freqs: list[float], setting: str | float) -> float:
    """max|mid|min -> the highest, middle or lowest of ``freqs`` (an OPP table, ascending); a
    frequency in MHz -> the highest OPP not above it (the lowest OPP below the table)."""
    if setting == "max":
        return freqs[-1]
    if setting == "min":
        return freqs[0]
    if setting == "mid":
        return freqs[len(freqs) // 2]
    want = float(setting)
    below = [x for x in freqs if x <= want + 1e-6]
    return below[-1] if below else freqs[0]


def check_unit_mhz(soc: SocSpec, unit: str, value, field: str) -> float:
    """A frequency setting of the DSP or GPU (max|mid|min or MHz) -> the OPP it runs at.

    As ``cpu.freq``: a frequency between OPPs is floored to the OPP below it; one above the top
    OPP or below the lowest, or not a number, is an InputError naming ``field`` with the unit's
    OPP range.  A SoC without the unit is an InputError too."""
    spec = soc.dsp if unit == "dsp" else soc.gpu
    name = "DSP" if unit == "dsp" else "GPU"
    if spec is None:
        raise InputError(f"{soc.name} has no {name}", field=field, value=value)
    freqs = [o.freq_mhz for o in spec.opps]
    if isinstance(value, str) and value.strip().lower() in ("max", "mid", "min"):
        return opp_for(freqs, value.strip().lower())
    try:
        if isinstance(value, bool):
            raise ValueError
        f = float(value)
        if math.isnan(f):
            raise ValueError
    except (TypeError, ValueError):
        raise InputError(f"expected max|mid|min or MHz; the {name} of {soc.name} runs at "
                         f"{opp_range(spec.opps)}", field=field, value=value) from None
    if f > freqs[-1] + 1e-6:
        raise InputError(f"above the highest operating point of the {name} of {soc.name}: "
                         f"{opp_range(spec.opps)}", field=field, value=value)
    if f < freqs[0] - 1e-6:
        raise InputError(f"below the lowest operating point of the {name} of {soc.name}: "
                         f"{opp_range(spec.opps)}", field=field, value=value)
    return opp_for(freqs, f)


def check_freq_setting(soc: SocSpec, setting, field: str = "cpu.freq") -> None:
    """Check a ``cpu.freq`` setting (max|mid|min, MHz, or cluster -> either) against the SoC.

    A frequency between OPPs or above a cluster's top OPP is clamped per cluster by
    :func:`pick_opp` (one number for all clusters: 2000 MHz is above the little cluster's top
    and meant for the big ones).  It is an error only when no cluster it applies to can use it:
    above the top OPP of every one of them, or below the lowest OPP of every one of them.  A
    per-cluster value applies to its own cluster; an unknown cluster name is an error."""
    if isinstance(setting, dict):
        names = [c.name for c in soc.cpu.clusters]
        for name, v in setting.items():
            if name not in names:
                raise InputError(f"no CPU cluster {name!r} on {soc.name}, whose clusters are {', '.join(names)}",
                                 field=f"{field}.{name}", value=v)
            check_clusters_mhz(soc, [soc.cluster(name)], v, f"{field}.{name}")
        return
    check_clusters_mhz(soc, list(soc.cpu.clusters), setting, field)


def check_clusters_mhz(soc: SocSpec, clusters: list[Cluster], v, field: str) -> None:
    if isinstance(v, str) or isinstance(v, bool):
        return  # max|mid|min (the workload schema checks the names)
    f = float(v)
    top = max(c.max_mhz for c in clusters)
    low = min(c.min_mhz for c in clusters)
    if len(clusters) == 1:
        which = "cluster " + clusters[0].name
    elif len(clusters) == len(soc.cpu.clusters):
        which = f"any CPU cluster of {soc.name}"
    else:   # the clusters a core set spans (ctx.freqs)
        which = f"any of the clusters {', '.join(c.name for c in clusters)} of {soc.name}"
    if f > top + 1e-6:
        raise InputError(f"above the highest operating point of {which} ({top:g} MHz)", field=field, value=v)
    if f < low - 1e-6:
        raise InputError(f"below the lowest operating point of {which} ({low:g} MHz)", field=field, value=v)

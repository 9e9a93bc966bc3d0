"""Naming CPU core sets and operating points the way the workload YAML does."""
from __future__ import annotations

from socsim.errors import InputError
from socsim.spec.soc import Cluster, SocSpec


def big_cores(soc: SocSpec) -> list[int]:
    """Cores of every cluster but the first (lowest-capacity) one, in id order."""
    if len(soc.cpu.clusters) == 1:
        return list(soc.cpu.clusters[0].core_ids)
    return sorted(i for c in soc.cpu.clusters[1:] for i in c.core_ids)


def little_cores(soc: SocSpec) -> list[int]:
    return sorted(soc.cpu.clusters[0].core_ids)


def resolve_cores(soc: SocSpec, spec: str | list[int] | tuple[int, ...], field: str = "cpu.cores") -> tuple[int, ...]:
    """``big2`` -> (4, 5) on sd865; a list of ids is checked against the SoC."""
    all_ids = sorted(i for c in soc.cpu.clusters for i in c.core_ids)
    if isinstance(spec, (list, tuple)):
        bad = [c for c in spec if c not in all_ids]
        if bad:
            raise InputError(f"{soc.name} has cores {all_ids}", field=field, value=list(spec))
        return tuple(sorted(spec))
    if spec in ("hybrid8", "all"):
        return tuple(all_ids)
    if spec == "prime1":
        return (max(soc.cpu.clusters[-1].core_ids),)
    for prefix, pool in (("big", big_cores(soc)), ("little", little_cores(soc))):
        if spec.startswith(prefix):
            n = int(spec[len(prefix):])
            if n > len(pool):
                raise InputError(f"{soc.name} has only {len(pool)} {prefix} cores {pool}", field=field, value=spec)
            return tuple(pool[:n])
    raise InputError("unknown core set", field=field, value=spec)


def clusters_of(soc: SocSpec, cores: tuple[int, ...]) -> list[Cluster]:
    return [c for c in soc.cpu.clusters if any(i in c.core_ids for i in cores)]


def pick_opp(cluster: Cluster, setting: str | float, cap_mhz: float | None = None) -> float:
    """max|mid|min or a frequency in MHz -> the highest OPP not above it (and not above the cap)."""
    freqs = [o.freq_mhz for o in cluster.opps]
    if setting == "max":
        f = freqs[-1]
    elif setting == "min":
        f = freqs[0]
    elif setting == "mid":
        f = freqs[len(freqs) // 2]
    else:
        want = float(setting)
        below = [x for x in freqs if x <= want + 1e-6]
        f = below[-1] if below else freqs[0]
    if cap_mhz is not None and f > cap_mhz:
        below = [x for x in freqs if x <= cap_mhz + 1e-6]
        f = below[-1] if below else freqs[0]
    return f

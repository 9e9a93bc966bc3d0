"""CPU frequency governors, as Linux cpufreq implements them, at batch granularity.

performance  top OPP;  powersave  lowest OPP;  userspace  the workload's ``cpu.freq``;
schedutil    next_freq = 1.25 * max_freq * util (kernel/sched/cpufreq_schedutil.c), util the
             cluster's busy fraction over the previous batch, rounded up to an OPP; a cluster
             with no history starts at its top OPP (the training thread is runnable).
Clusters the plan does not use sit at their lowest OPP.  Thermal caps are applied by the engine.
"""
from __future__ import annotations

from socsim.contract.cores import pick_opp
from socsim.spec.soc import Cluster, SocSpec

SCHEDUTIL_HEADROOM = 1.25  # kernel/sched/cpufreq_schedutil.c: map_util_freq() adds 25%


def cluster_frequencies(soc: SocSpec, governor: str, setting, fixed: tuple[tuple[str, float], ...] | None,
                        used: set[str], util: dict[str, float], prev: dict[str, float],
                        apps: dict[str, float] | None = None) -> dict[str, float]:
    """Each CPU cluster's requested frequency for a batch.  ``used``: the clusters training runs
    on; ``util``: what schedutil saw of them over the last batch; ``apps``: the highest
    utilisation of a foreground app on a core of each cluster (schedutil takes the busiest CPU
    of the policy, so an app raises its cluster's clock as training does; a cluster neither
    uses sits at its lowest OPP)."""
    out: dict[str, float] = {}
    fixed_d = dict(fixed or ())
    apps = apps or {}
    for c in soc.cpu.clusters:
        if c.name in fixed_d:
            out[c.name] = pick_opp(c, fixed_d[c.name])
        elif c.name not in used and c.name not in apps:
            out[c.name] = c.min_mhz
        elif c.name not in used and governor == "schedutil":
            out[c.name] = ceil_opp(c, SCHEDUTIL_HEADROOM * c.max_mhz * min(1.0, apps[c.name]))
        elif governor == "performance":
            out[c.name] = c.max_mhz
        elif governor == "powersave":
            out[c.name] = c.min_mhz
        elif governor == "userspace":
            s = setting.get(c.name, "max") if isinstance(setting, dict) else setting
            out[c.name] = pick_opp(c, s)
        else:  # schedutil
            if c.name not in util:
                out[c.name] = c.max_mhz
            else:
                # util: busy fraction of the plan's cores in this cluster over the last batch
                u = max(util[c.name], apps.get(c.name, 0.0))
                out[c.name] = ceil_opp(c, SCHEDUTIL_HEADROOM * c.max_mhz * min(1.0, u))
    return out


#: key of a batch's busy times (socsim.engine.batch) for the seconds only the host core works:
#: graph preparation, per-batch overheads, FastRPC calls (the other training threads wait)
HOST_BUSY = "host"


def schedutil_util(soc: SocSpec, cores: tuple[int, ...], busy: dict[str, float], active_s: float) -> dict[str, float]:
    """Utilisation schedutil sees in each cluster the plan's ``cores`` span over ``active_s``
    seconds: the busiest core's busy fraction, as sugov_get_util() takes the maximum over the
    policy's CPUs (kernel/sched/cpufreq_schedutil.c).  ``busy`` holds core-seconds per cluster
    (the ops split evenly over the plan's cores there, plus the host core's own work) and the
    host-only seconds under :data:`HOST_BUSY`; the host core is ``cores[0]``."""
    out: dict[str, float] = {}
    if active_s <= 0 or not cores:
        return out
    host_s = busy.get(HOST_BUSY, 0.0)
    host = soc.cpu.cluster_of(cores[0]).name
    for c in soc.cpu.clusters:
        n = sum(1 for i in cores if i in c.core_ids)
        if not n:
            continue
        if c.name == host:
            core_s = (busy.get(c.name, 0.0) - host_s) / n + host_s
        else:
            core_s = busy.get(c.name, 0.0) / n
        out[c.name] = max(0.0, core_s) / active_s
    return out


def ceil_opp(c: Cluster, mhz: float) -> float:
    for o in c.opps:
        if o.freq_mhz >= mhz - 1e-6:
            return o.freq_mhz
    return c.max_mhz


def floor_opp(c: Cluster, mhz: float) -> float:
    return pick_opp(c, mhz)

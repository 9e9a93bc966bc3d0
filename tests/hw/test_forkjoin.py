"""Fork-join threading (socsim.hw.forkjoin): the serial part of each op, background work that
preempts threads running in lockstep on a fully occupied domain, and spinning cores' activity."""
import pytest
from hypothesis import given, settings, strategies as st

from socsim.hw import forkjoin
from socsim.hw.cost import CpuConfig
from socsim.hw.cpu import CpuCostModel, cpu_cost
from socsim.spec import load_soc
from socsim.workload.ops import Op, make_params

SOC = load_soc("sd855")
UTIL = {"little": 0.06, "big": 0.2}
CONV = Op("c", "conv2d", "forward", "l", "fp32", make_params(batch=8, cin=64, h=32, w=32, cout=64, kh=3, kw=3,
                                                              stride=1, pad=1, groups=1, oh=32, ow=32))


def _cfg(little=1800.0, big=2400.0, cores=(0, 1, 2, 3)):
    return CpuConfig(tuple(cores), (("little", little), ("mid", big), ("prime", big)))


def test_domains_split_little_from_the_rest():
    assert forkjoin.domains(SOC) == {"little": (0, 1, 2, 3), "big": (4, 5, 6, 7)}


def test_no_preemption_while_a_domain_keeps_an_idle_core():
    for cores in [(0,), (4,), (0, 1), (0, 1, 2), (4, 5, 6), (0, 1, 2, 4, 5, 6)]:
        assert forkjoin.background_share(SOC, _cfg(cores=cores), cores, UTIL) == 0.0, cores


def test_a_full_domain_takes_its_background_work_and_the_domains_add():
    little = forkjoin.background_share(SOC, _cfg(), (0, 1, 2, 3), UTIL)
    big = forkjoin.background_share(SOC, _cfg(), (4, 5, 6, 7), UTIL)
    both = forkjoin.background_share(SOC, _cfg(), tuple(range(8)), UTIL)
    assert little == pytest.approx(0.06) and big > 0.2   # the prime core runs below its top OPP
    assert both == pytest.approx(little + big)


@settings(max_examples=30, deadline=None)
@given(f=st.floats(300.0, 1800.0))
def test_the_preempted_share_grows_as_the_clock_drops(f):
    """Fixed background cycles per second: the share is u_top * f_top / f (until the cap)."""
    u = forkjoin.background_share(SOC, _cfg(little=f), (0, 1, 2, 3), UTIL)
    assert u == pytest.approx(min(0.06 * 1800.0 / f, forkjoin.U_MAX))
    assert u >= forkjoin.background_share(SOC, _cfg(little=min(1800.0, f * 1.5)), (0, 1, 2, 3), UTIL)


def test_one_thread_is_untouched_by_the_fork_join_constants(monkeypatch):
    before = cpu_cost(SOC, CONV, _cfg(cores=(4,)))
    monkeypatch.setattr(forkjoin, "SERIAL_FRACTION", 0.5)
    monkeypatch.setattr(forkjoin, "BACKGROUND_UTIL_TOP", {"little": 0.5, "big": 0.5})
    assert cpu_cost(SOC, CONV, _cfg(cores=(4,))).time_s == before.time_s


def test_serial_part_slows_a_split_op_as_amdahl_says(monkeypatch):
    monkeypatch.setattr(forkjoin, "BACKGROUND_UTIL_TOP", {"little": 0.0, "big": 0.0})
    monkeypatch.setattr(forkjoin, "SERIAL_FRACTION", 0.0)
    bare = cpu_cost(SOC, CONV, _cfg(cores=(4, 5)))
    monkeypatch.setattr(forkjoin, "SERIAL_FRACTION", 0.1)
    c = cpu_cost(SOC, CONV, _cfg(cores=(4, 5)))
    comp = dict(bare.detail)["compute_s"]
    # equal cores: compute (0.1 + 0.9 / 2) / (1 / 2) = 1.1x
    assert dict(c.detail)["compute_s"] == pytest.approx(1.1 * comp, rel=1e-6)
    assert c.time_s > bare.time_s


def test_lockstep_threads_on_a_full_little_cluster_collapse_at_the_low_step(monkeypatch):
    """The development set's pattern (LITTLE4 at L is slower than LITTLE2 at L, while at H it is
    faster): four threads on four little cores take the background work, two leave it idle cores."""
    monkeypatch.setattr(forkjoin, "BACKGROUND_UTIL_TOP", {"little": 0.25, "big": 0.0})
    t = {(n, f): cpu_cost(SOC, CONV, _cfg(little=f, cores=tuple(range(n)))).time_s
         for n in (2, 4) for f in (600.0, 1800.0)}
    assert t[4, 1800.0] < t[2, 1800.0]
    assert t[4, 600.0] > t[2, 600.0]
    assert dict(cpu_cost(SOC, CONV, _cfg(little=600.0, cores=(0, 1))).detail)["noise_s"] == 0.0


def test_background_shares_are_per_full_domain():
    shares = forkjoin.background_shares(SOC, _cfg(), tuple(range(8)), UTIL)
    assert set(shares) == {"little", "big"}
    assert shares["little"] == pytest.approx(0.06)
    assert sum(shares.values()) == pytest.approx(forkjoin.background_share(SOC, _cfg(), tuple(range(8)), UTIL))
    assert forkjoin.background_shares(SOC, _cfg(cores=(0, 1, 2, 3, 4)), (0, 1, 2, 3, 4), UTIL).keys() == {"little"}
    assert forkjoin.background_shares(SOC, _cfg(cores=(0,)), (0,), UTIL) == {}


def _noise(cores, little, big, monkeypatch, f_little=600.0, f_big=800.0):
    monkeypatch.setattr(forkjoin, "BACKGROUND_UTIL_TOP", {"little": little, "big": big})
    cfg = CpuConfig(tuple(cores), (("little", f_little), ("mid", f_big), ("prime", f_big)))
    return dict(cpu_cost(SOC, CONV, cfg).detail)["noise_s"]


def test_a_hybrid_set_pays_the_pacing_domains_preemption_not_the_sum(monkeypatch):
    """All eight cores: the little threads pace the statically split op and the big ones finish
    early, so the big domain's background work fits in their slack (the op waits for its last
    thread): the op pays the little domain's preemption, not little + big as a sum would."""
    both = _noise(range(8), 0.2, 0.2, monkeypatch)
    little_only = _noise(range(8), 0.2, 0.0, monkeypatch)
    big_only = _noise(range(8), 0.0, 0.2, monkeypatch)
    assert both == pytest.approx(little_only) and little_only > 0.0
    assert big_only == 0.0
    # the same big-domain work on four big cores alone, with no slack, does delay the op
    assert _noise((4, 5, 6, 7), 0.0, 0.2, monkeypatch) > 0.0


def test_a_domain_whose_stretched_threads_outlast_the_pacing_ones_delays_the_op(monkeypatch):
    """Enough background work on the big domain (little at its top clock, big at its lowest
    step) outlasts the big threads' slack: the op then waits for them."""
    assert _noise(range(8), 0.0, 0.0, monkeypatch, f_little=1800.0, f_big=800.0) == 0.0
    assert _noise(range(8), 0.0, 0.3, monkeypatch, f_little=1800.0, f_big=800.0) > 0.0
    # at the big clusters' top clock the same work fits in the big threads' slack
    assert _noise(range(8), 0.0, 0.3, monkeypatch, f_little=600.0, f_big=2400.0) == 0.0


def test_fast_cores_waiting_for_slow_ones_switch_less(monkeypatch):
    """A big core paired with a little one finishes its half early and spins: the op's activity
    (weighted by the cores' C V^2 f) is below that of two little cores doing the same op (with
    the core types' dense-kernel power equal, so that only the waiting differs)."""
    from socsim.spec import coretypes
    monkeypatch.setattr(coretypes, "KERNEL_POWER", {})
    mixed = cpu_cost(SOC, CONV, _cfg(cores=(0, 4)))
    little = cpu_cost(SOC, CONV, _cfg(cores=(0, 1)))
    assert mixed.activity < little.activity
    # the little core paces the split part; the serial part (SERIAL_FRACTION of the single-thread
    # compute) runs on the calling thread's core, the big one in the mixed pair: faster by about
    # that part's share (0.86 at SERIAL_FRACTION 0.06, 0.90 at 0.03)
    assert mixed.time_s == pytest.approx(little.time_s, rel=0.2)
    assert mixed.time_s < little.time_s


def test_cost_model_reports_the_noise_it_charged():
    m = CpuCostModel(SOC)
    c = m.cost(CONV, _cfg(little=600.0))
    assert dict(c.detail)["noise_s"] > 0 and c.stall_s >= dict(c.detail)["noise_s"]


def test_spinning_and_stalled_time_switch_less_than_computing(monkeypatch):
    """socsim.hw.cpu: a core's activity is KERNEL_POWER while it computes, SPIN_ACTIVITY while
    it waits at the barrier and STALL_ACTIVITY while it stalls on memory; lowering the spin
    figure lowers the activity of an op whose threads wait (preempted lockstep threads), and
    the compute part scales with the core type's kernel power."""
    from socsim.hw import cpu
    from socsim.spec import coretypes
    cfg = _cfg(little=600.0)               # four little cores: the background preempts them
    base = cpu_cost(SOC, CONV, cfg)
    assert dict(base.detail)["noise_s"] > 0
    monkeypatch.setattr(cpu, "SPIN_ACTIVITY", 0.0)
    assert cpu_cost(SOC, CONV, cfg).activity < base.activity
    monkeypatch.setattr(cpu, "SPIN_ACTIVITY", 0.1)
    monkeypatch.setattr(coretypes, "KERNEL_POWER", {"cortex-a55": 2.0})
    doubled = cpu_cost(SOC, CONV, cfg)
    monkeypatch.setattr(coretypes, "KERNEL_POWER", {"cortex-a55": 1.0})
    single = cpu_cost(SOC, CONV, cfg)
    assert single.activity < doubled.activity < 2 * single.activity
    assert doubled.time_s == single.time_s          # power only


# -- the background as a run condition (a workload's environment.background) ----------------

def _with_bg(cfg, little, big):
    from dataclasses import replace
    return replace(cfg, background=forkjoin.background_of(little, big))


def test_the_run_condition_replaces_the_fitted_background():
    cores = (4, 5, 6, 7)
    fitted = forkjoin.background_share(SOC, _cfg(cores=cores), cores)
    assert fitted > forkjoin.BACKGROUND_UTIL_TOP["big"] > 0   # the fitted value, the prime core below its top OPP
    assert forkjoin.background_share(SOC, _with_bg(_cfg(cores=cores), 0.0, 0.0), cores) == 0.0
    assert forkjoin.background_share(SOC, _with_bg(_cfg(cores=cores), None, None), cores) == pytest.approx(fitted)
    # the share scales with the stated value
    assert (forkjoin.background_share(SOC, _with_bg(_cfg(cores=cores), 0.0, 0.1), cores)
            == pytest.approx(fitted * 0.1 / forkjoin.BACKGROUND_UTIL_TOP["big"]))
    # an explicit util_top (the fit script's) still wins over the run's
    assert (forkjoin.background_share(SOC, _with_bg(_cfg(cores=cores), 0.0, 0.0), cores, UTIL)
            == pytest.approx(fitted * UTIL["big"] / forkjoin.BACKGROUND_UTIL_TOP["big"]))


def test_background_of_fills_a_domain_left_out_with_the_fitted_value():
    fit = forkjoin.BACKGROUND_UTIL_TOP
    assert forkjoin.background_of() == (("big", fit["big"]), ("little", fit["little"]))
    assert forkjoin.background_of(little=0.0) == (("big", fit["big"]), ("little", 0.0))
    assert forkjoin.background_of(big=0.5) == (("big", 0.5), ("little", fit["little"]))


@settings(max_examples=25, deadline=None)
@given(big=st.floats(0.0, 1.0), little=st.floats(0.0, 1.0))
def test_a_quiet_phone_is_ideal_lockstep_and_more_background_is_never_faster(big, little):
    cores = tuple(range(8))
    quiet = cpu_cost(SOC, CONV, _with_bg(_cfg(cores=cores), 0.0, 0.0))
    busy = cpu_cost(SOC, CONV, _with_bg(_cfg(cores=cores), little, big))
    assert dict(quiet.detail)["noise_s"] == 0.0
    assert busy.time_s >= quiet.time_s
    u = forkjoin.background_share(SOC, _with_bg(_cfg(cores=cores), little, big), cores)
    assert 0.0 <= u <= forkjoin.U_MAX
    assert busy.time_s == pytest.approx(quiet.time_s + dict(busy.detail)["noise_s"], rel=1e-9)


def test_the_cost_memo_keys_on_the_background():
    """Two runs on one SoC with different backgrounds never share a cost (the oracle's key, the
    model's memo and a fleet's shared table all key on the CpuConfig, which carries it)."""
    from socsim.engine.oracle import CostOracle
    quiet = CostOracle(SOC, cpu_background=forkjoin.background_of(0.0, 0.0))
    fitted = CostOracle(SOC)
    freqs = tuple(sorted((cl.name, cl.max_mhz) for cl in SOC.cpu.clusters[1:]))
    cq = quiet.config("cpu", cores=(4, 5, 6, 7), freqs=freqs)
    cf = fitted.config("cpu", cores=(4, 5, 6, 7), freqs=freqs)
    assert cq.background == (("big", 0.0), ("little", 0.0)) and cf.background is None
    assert cq != cf and CostOracle._key(CONV, "cpu", cq) != CostOracle._key(CONV, "cpu", cf)
    model = CpuCostModel(SOC)
    t_f, t_q = model.cost(CONV, cf).time_s, model.cost(CONV, cq).time_s   # one model, both answers
    assert t_q < t_f
    assert t_f == pytest.approx(t_q / (1.0 - forkjoin.background_share(SOC, cf, cf.cores)), rel=1e-6)
    # other units' configurations are left alone
    assert not hasattr(quiet.config("gpu"), "background")

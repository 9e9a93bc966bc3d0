"""Pydantic models of a SoC spec (``soc_specs/*.yaml``).

Every block names the source of its constants (``source``/``sources``); the loader refuses a
block without one.  Units are in the field names (``_mhz``, ``_mv``, ``_kb``, ``_mw``...).
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic_core import PydanticCustomError

from pydantic import Field, PositiveFloat, PositiveInt, ValidationInfo, field_validator, model_validator

from socsim.spec.base import Sourced, StrictModel
from socsim.spec.coretypes import fitted_fp32_efficiency


class Opp(StrictModel):
    """One operating performance point: a frequency and the voltage it needs."""

    # Physical plausibility bounds (docs/socs.md, Plausible ranges).  Clock: no phone CPU, DSP or
    # GPU has shipped an OPP above ~3.4 GHz (Snapdragon 8 Gen 3's prime core, Qualcomm product
    # brief); 5 GHz leaves room for future parts and stays below any mobile process's limit.
    freq_mhz: float = Field(gt=0, le=5000, allow_inf_nan=False)
    # Voltage: FinFET logic runs from near-threshold (~0.45 V) to ~1.1 V overdrive (the shipped
    # specs' OPP tables span 0.56-1.07 V); 0.4-1.5 V brackets every mobile rail (PMIC datasheets).
    voltage_mv: float = Field(ge=400, le=1500, allow_inf_nan=False)


def check_opps(v: list[Opp]) -> list[Opp]:
    """OPPs strictly increasing in frequency (the lookups that pick an OPP rely on the order)."""
    freqs = [o.freq_mhz for o in v]
    if freqs != sorted(freqs) or len(set(freqs)) != len(freqs):
        raise ValueError(f"OPPs must be strictly increasing in frequency, got {freqs}")
    volts = [o.voltage_mv for o in v]
    if volts != sorted(volts):   # a faster clock never runs at a lower voltage (a typo in a table)
        raise ValueError(f"OPP voltages must not fall as frequency rises, got {volts} mV at {freqs} MHz")
    return v


def opp_range(opps: list[Opp]) -> str:
    """'500-1497 MHz (OPPs 500, 1171, 1402, 1497)' for error messages."""
    freqs = [o.freq_mhz for o in opps]
    return f"{freqs[0]:g}-{freqs[-1]:g} MHz (OPPs {', '.join(f'{f:g}' for f in freqs)})"


class _OppRange:
    """The top and bottom operating points of a unit with an ``opps`` table (sorted)."""

    opps: list[Opp]

    @property
    def max_mhz(self) -> float:
        return self.opps[-1].freq_mhz

    @property
    def min_mhz(self) -> float:
        return self.opps[0].freq_mhz


class CacheLevel(StrictModel):
    """One cache level.  ``shared_by`` says which cores (or unit) share one instance."""

    # bounds of what the cache simulator is built for: no phone cache reaches 256 MB
    size_kb: PositiveFloat = Field(le=256 * 1024)
    # Defaults for a spec that omits them (every shipped spec sets assoc and hit_latency_cycles,
    # with sources in its sources maps): assoc 8, the L2 associativity of Arm's Cortex-A76/A77
    # (WikiChip); 64-byte lines as every Arm core here; hit_latency_cycles 4, an L1-like latency
    # (assumption: a level a spec leaves unspecified is charged as a fast one).
    # bounds: hardware caches are 1- to 32-way (Arm's widest, the Cortex-X L3/SLC, are 16-way;
    # Intel's L3 slices 20-way); 64 leaves room, and the simulator's per-set work grows with it
    assoc: int = Field(8, ge=1, le=64)
    line_bytes: PositiveInt = 64
    policy: Literal["lru", "plru", "fifo", "random"] = "lru"
    write_policy: Literal["write-back", "write-through"] = "write-back"
    # bound: an SLC hit is ~60 cycles on the shipped specs, DRAM ~300; 1000 cycles is no cache
    hit_latency_cycles: int = Field(4, ge=1, le=1000)

    @field_validator("line_bytes")
    @classmethod
    def _line(cls, v: int) -> int:
        # the access streams are 64-byte lines (128 on the DSP): a level's line is a power of two
        # no smaller than that
        # no phone cache has lines above 128 bytes (Hexagon's L2); 256 bounds what hardware builds
        if v < 64 or v > 256 or v & (v - 1):
            raise ValueError(f"a cache line is a power of two from 64 to 256 bytes, got {v}")
        return v

    @model_validator(mode="after")
    def _one_set(self) -> "CacheLevel":
        way = self.assoc * self.line_bytes
        if self.size_kb * 1024 < way:
            raise ValueError(f"assoc {self.assoc} x line_bytes {self.line_bytes} = {way} bytes per set is more "
                             f"than the whole cache ({self.size_kb:g} KB): not even one set")
        # hardware indexes sets with address bits: their count is a power of two (a 12-way
        # 3 MB SLC has 4096 sets), so size = sets x assoc x line exactly
        sets = self.size_kb * 1024 / way
        if sets != int(sets) or int(sets) & (int(sets) - 1):
            raise ValueError(f"size_kb {self.size_kb:g} / (assoc {self.assoc} x line_bytes {self.line_bytes}) = "
                             f"{sets:g} sets; hardware has a power-of-two number of sets (size_kb = 2^k x assoc "
                             f"x line_bytes / 1024)")
        return self


class Cluster(_OppRange, Sourced):
    """A CPU cluster: cores of one type sharing a frequency (and voltage) domain."""

    # a cluster's name is part of rail and column names (cpu.<name>, cpufreq.<name>): a word
    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")
    core_type: str
    core_ids: list[Annotated[int, Field(ge=0)]] = Field(min_length=1)
    opps: list[Opp] = Field(min_length=1)
    # bounds: the widest shipped cores decode 8-10 instructions a cycle and have 4 SIMD pipes
    # (Cortex-X4, Arm TRM); 16 and 8 bound what a core could build
    issue_width: int = Field(ge=1, le=16)
    neon_pipes_128b: int = Field(ge=1, le=8)
    # bounds: a scalar core does 1 FLOP/cycle, the widest SVE core ~64; outside is a typo
    fp32_flops_per_cycle: float = Field(ge=1, le=1024, description="peak FP32 FLOPs/cycle/core (FMA = 2)")
    int8_macs_per_cycle: float = Field(ge=1, le=4096, description="peak INT8 MACs/cycle/core (sdot)")
    # filled from socsim.spec.coretypes for a core type listed there (a property of the core type,
    # the same on every SoC); a spec gives it only for core types the table does not list
    fp32_efficiency: float = Field(gt=0, le=1, description="achieved/peak for training kernels")
    int8_efficiency: float = Field(gt=0, le=1)
    l1d: CacheLevel
    l2: CacheLevel
    # bounds: the shipped cores' EAS coefficients are 105-760 uW/MHz/V^2 (kernel DTS); 10,000
    # is a 30 W core at 3 GHz and 1 V, beyond any phone.  Leakage under 2 W a core (a phone's
    # whole SoC leaks well under that at 25 C).
    dyn_power_coeff_uw_mhz_v2: float = Field(gt=0, le=10_000, description="EAS dynamic-power-coefficient")
    leakage_mw_per_core: float = Field(ge=0, le=2000, description="static power per core at 1 V, 25 C")
    idle_mw_per_core: float = Field(ge=0, le=2000, default=0.0, description="power-collapsed residual")

    @field_validator("opps")
    @classmethod
    def _sorted_opps(cls, v: list[Opp]) -> list[Opp]:
        return check_opps(v)

    @model_validator(mode="before")
    @classmethod
    def _core_type_efficiency(cls, data):
        if not isinstance(data, dict) or not isinstance(data.get("core_type"), str):
            return data
        fitted = fitted_fp32_efficiency(data["core_type"])
        if fitted is None:
            if data.get("fp32_efficiency") is None and "fp32_efficiency" not in data:
                # the field is required because of the core type: say so, naming both
                raise ValueError(f"core_type {data['core_type']!r} has no fitted fp32_efficiency "
                                 "(socsim/spec/coretypes.py lists the fitted core types): give fp32_efficiency")
            return data
        given = data.get("fp32_efficiency")
        if given is not None and abs(float(given) - fitted) > 1e-9:
            raise ValueError(f"fp32_efficiency {given} for a {data['core_type']} core: the core type's fitted value "
                             f"is {fitted} (socsim/spec/coretypes.py), the same on every SoC; leave the field out")
        return {**data, "fp32_efficiency": fitted}

    @property
    def count(self) -> int:
        return len(self.core_ids)


VoteTable = list[tuple[PositiveFloat, PositiveFloat]]


class BwMon(Sourced):
    """Qualcomm's DDR bandwidth governor (devfreq ``bw_hwmon`` on the ``cpu-llcc-ddr-bw`` device,
    drivers/devfreq/governor_bw_hwmon.c of the msm kernels): a hardware monitor counts the CPU
    subsystem's bytes to DDR in short windows and the governor votes the DDR clock whose
    bandwidth covers the measured traffic over ``io_percent``: in steady traffic
    ``freq = meas_mbps * 100 / io_percent`` (MB/s), and devfreq takes the lowest OPP of the
    device's ``ddr-bw-opp-table`` at or above it.  An OPP's MB/s is its DDR MHz times
    ``mbps_per_mhz`` (the table's ``BW_OPP_ENTRY(mhz, width)``: MHz x width bytes / 2^20).  The
    DDR runs at the highest of this vote and the latency governors' (:class:`Uncore`)."""

    io_percent: float = Field(gt=0, le=400, description="measured traffic as a percent of the voted bandwidth")
    ddr_opps_mhz: list[PositiveFloat] = Field(min_length=1, description="the DDR clocks the vote chooses from, ascending")
    mbps_per_mhz: PositiveFloat = Field(description="MB/s (2^20 bytes) of an OPP per DDR MHz")

    @model_validator(mode="after")
    def _ascending(self) -> "BwMon":
        if list(self.ddr_opps_mhz) != sorted(self.ddr_opps_mhz):
            raise PydanticCustomError("bwmon", "ddr_opps_mhz must ascend; got {v}",
                                      {"fields": ("ddr_opps_mhz",), "v": self.ddr_opps_mhz})
        return self

    def vote(self, bytes_per_s: float) -> float:
        """The DDR clock (MHz) the governor votes for a steady ``bytes_per_s`` of CPU traffic."""
        need = bytes_per_s / float(1 << 20) * 100.0 / self.io_percent
        for mhz in self.ddr_opps_mhz:
            if mhz * self.mbps_per_mhz >= need:
                return float(mhz)
        return float(self.ddr_opps_mhz[-1])


class Uncore(Sourced):
    """Clocks of the shared L3 (DSU), the system cache (LLCC) and the DDR as Qualcomm's
    memory-latency governors set them from the CPU clusters' frequencies.

    Each table is an ``arm-memlat-mon`` ``qcom,core-dev-table`` of the SoC's device tree: rows of
    (CPU MHz, uncore MHz); a cluster at CPU frequency f votes the uncore frequency of the first row
    whose CPU MHz is >= f (the last row above the table), and the uncore runs at the highest vote
    of the clusters in use (the governor's aggregation).  ``ddr_floor_mhz`` is the
    ``arm-cpu-mon`` compute floor (same lookup).  A spec without this block keeps the uncore at
    its top clock (cache latencies in core cycles, DRAM at ``dram.latency_ns``/``bandwidth_gbs``)."""

    l3_mhz: dict[str, VoteTable] = Field(description="cluster -> (CPU MHz, L3 MHz) rows")
    llcc_mhz: dict[str, VoteTable] = Field(default_factory=dict, description="cluster -> (CPU MHz, LLCC MHz) rows")
    ddr_mhz: dict[str, VoteTable] = Field(description="cluster -> (CPU MHz, DDR MHz) rows")
    ddr_floor_mhz: dict[str, VoteTable] = Field(default_factory=dict, description="cluster -> (CPU MHz, DDR MHz) floor")
    ddr_peak_mhz: PositiveFloat = Field(description="DDR clock at which dram.bandwidth_gbs and dram.latency_ns hold")
    dram_ddr_cycles: float = Field(ge=0, description="part of dram.latency_ns that is DDR-clock cycles")
    # The memory subsystem's power at the voted clocks (socsim.hw.power.uncore_power_mw): DDR,
    # its controller and PHY, the LLCC and the NoC, which the votes move together.  0: not modelled.
    power_top_mw: float = Field(0.0, ge=0, description="memory-subsystem power at the top DDR clock, above the idle floor")
    power_exponent: float = Field(3.0, ge=1, le=3, description="P ~ f_ddr ** exponent (1: fixed voltage, 3: V ~ f)")
    # The bandwidth governor's vote from the CPU's measured DDR traffic (socsim.hw.cpu): None
    # keeps the DDR at the latency governors' votes alone.
    bwmon: BwMon | None = None
    # The latency governors' gate (governor_memlat.c): a cluster's monitor votes its table clock
    # only while its cores run at most ``ratio_ceil`` instructions per cache miss (the monitor's
    # ``qcom,cachemiss-ev``: L2 refills for the L3's monitors, L3 refills for the LLCC's and the
    # DDR's), else nothing; the device then runs at the other votes or its floor.  which (l3,
    # llcc, ddr) -> cluster -> instructions per miss; a table without an entry votes always.
    ratio_ceil: dict[str, dict[str, PositiveFloat]] = Field(
        default_factory=dict, description="which -> cluster -> instructions per miss above which the monitor does not vote")

    @model_validator(mode="after")
    def _ratio_ceil_keys(self) -> "Uncore":
        for which, by_cluster in self.ratio_ceil.items():
            if which not in ("l3", "llcc", "ddr"):
                raise PydanticCustomError("uncore", "ratio_ceil: {w!r} is not l3, llcc or ddr",
                                          {"fields": ("ratio_ceil", which), "w": which})
            tabs = getattr(self, f"{which}_mhz")
            for c in by_cluster:
                if c not in tabs:
                    raise PydanticCustomError("uncore", "ratio_ceil.{w}: cluster {c!r} has no {w}_mhz table",
                                              {"fields": ("ratio_ceil", which, c), "w": which, "c": c})
        return self

    @staticmethod
    def lookup(table: VoteTable, cpu_mhz: float) -> float:
        for core, dev in table:
            if cpu_mhz <= core + 1e-6:
                return dev
        return table[-1][1]

    def vote(self, which: str, cluster_mhz: dict[str, float],
             per_miss: dict[str, float] | None = None) -> float | None:
        """The uncore clock (MHz) ``which`` (l3, llcc, ddr) for clusters in use at these clocks.
        ``per_miss``: the running code's instructions per miss of each monitor's event (``l2``
        for the L3's monitors, ``l3`` for the LLCC's and the DDR's); a cluster whose
        ``ratio_ceil`` it exceeds does not vote (without it every cluster votes).  With no vote
        left the device runs at its floor."""
        tabs = getattr(self, f"{which}_mhz")
        ceil = self.ratio_ceil.get(which, {})
        ipm = None if per_miss is None else per_miss.get("l2" if which == "l3" else "l3")
        inuse = [c for c in cluster_mhz if c in tabs]
        votes = [self.lookup(tabs[c], cluster_mhz[c]) for c in inuse
                 if ipm is None or c not in ceil or ipm <= ceil[c]]
        if which == "ddr":
            votes += [self.lookup(self.ddr_floor_mhz[c], f) for c, f in cluster_mhz.items() if c in self.ddr_floor_mhz]
        if votes:
            return max(votes)
        return self.floor(which) if inuse else None

    def top(self, which: str) -> float:
        return max(dev for tab in getattr(self, f"{which}_mhz").values() for _, dev in tab)

    def floor(self, which: str) -> float:
        """The lowest clock any cluster votes (the idle phone's)."""
        return min(dev for tab in getattr(self, f"{which}_mhz").values() for _, dev in tab)


class Cpu(Sourced):
    clusters: list[Cluster] = Field(min_length=1)
    l3: CacheLevel
    slc: CacheLevel | None = None
    uncore: Uncore | None = None
    # 3.5: midpoint of pub:cpu_config_switch_ms's 2-5 ms (measured on sd855), as the specs use
    config_switch_ms: float = Field(3.5, ge=0, description="cost of changing core set/frequency between batches")

    @model_validator(mode="after")
    def _unique_cores(self) -> "Cpu":
        ids = [i for c in self.clusters for i in c.core_ids]
        if len(ids) != len(set(ids)):
            raise ValueError(f"core ids repeat across clusters: {ids}")
        names = [c.name for c in self.clusters]
        if len(names) != len(set(names)):
            raise ValueError(f"cluster names repeat: {names}")
        # the first cluster is the little one and the last the biggest (big2, little4, Swan's cost
        # order read them so): listed the other way round, "big4" would train on the little cores
        tops = [c.max_mhz for c in self.clusters]
        if tops != sorted(tops):
            raise PydanticCustomError("cpu", "clusters are listed from the little to the biggest, by top frequency; "
                                      "got {order}", {"fields": ("clusters",), "order": ", ".join(
                                          f"{c.name} {c.max_mhz:g} MHz" for c in self.clusters)})
        if self.uncore is not None:
            for which in ("l3_mhz", "llcc_mhz", "ddr_mhz", "ddr_floor_mhz"):
                bad = sorted(set(getattr(self.uncore, which)) - set(names))
                if bad:
                    raise ValueError(f"uncore.{which} names clusters {bad} the cpu does not have ({names})")
        return self

    @property
    def core_count(self) -> int:
        return sum(c.count for c in self.clusters)

    def cluster_of(self, core_id: int) -> Cluster:
        for c in self.clusters:
            if core_id in c.core_ids:
                return c
        raise KeyError(core_id)

    @property
    def big_clusters(self) -> list[Cluster]:
        """Clusters other than the lowest-capacity one, fastest last."""
        return self.clusters[1:]


class Hmx(Sourced):
    """Hexagon Matrix eXtension (V68 and later): the cDSP's tensor unit, INT8 operands from VTCM."""

    int8_macs_per_cycle: PositiveInt = Field(description="peak INT8 multiply-accumulates per cycle")
    # the reduction and output-channel tile the unit works in: an op's depth and output
    # channels are padded up to these (QEMU v68n_1024 config: hmx_int8_depth, hmx_int8_spatial)
    depth: PositiveInt = 32
    spatial: PositiveInt = 64
    efficiency: float = Field(gt=0, le=1, description="sustained fraction of the peak on full tiles")


class Dsp(_OppRange, Sourced):
    """Hexagon compute DSP (cDSP) with HVX vector contexts (and HMX on V68 and later)."""

    name: str
    # Hexagon versions with HVX (Qualcomm Hexagon SDK); the emulator implements V66's instructions
    hvx_arch: Literal["v60", "v62", "v65", "v66", "v68", "v69", "v73", "v75", "v79"]
    opps: list[Opp] = Field(min_length=1)
    training_clock_mhz: PositiveFloat = Field(description="clock the seed systems trained at")
    # bounds: Hexagon has 4-6 hardware threads and 2-4 HVX contexts (Hexagon V66-V73 manuals)
    hardware_threads: int = Field(ge=1, le=16)
    hvx_contexts: int = Field(ge=1, le=16)
    # HVX's 128-byte vector mode, the one the emulator (isa/hvx) implements and every shipped
    # spec's Hexagon runs; the 64-byte mode of early parts is not modelled
    vector_bytes: Literal[128] = 128
    int8_macs_per_cycle_per_context: int = Field(128, ge=1, le=4096)
    l2: CacheLevel
    # bound: VTCM is 256 KB-8 MB on shipped Hexagons (sd888: 4 MB); 64 MB is no TCM
    vtcm_kb: float = Field(gt=0, le=64 * 1024)
    # bounds as for a CPU cluster: a unit of 30 W at 3 GHz and 1 V; leakage under 5 W
    dyn_power_coeff_uw_mhz_v2: float = Field(gt=0, le=10_000)
    leakage_mw: float = Field(ge=0, le=5000)
    has_float: bool = False
    # default for a spec that omits it: assumption, the value of a 4 GB phone (sd845.yaml);
    # the shipped specs scale it with phone RAM (256 MB at 4 GB, 384 at 6 GB, 512 at 8 GB)
    memory_budget_mb: PositiveFloat = 256
    batch_pad_to: int = Field(32, ge=1, le=1024, description="Hexagon NN pads batches above 4 to this multiple")
    hmx: Hmx | None = Field(None, description="the HMX tensor unit, on V68 and later (None: none)")
    # how HVX kernels reach their activations (socsim.hw.dsp, docs/hvx.md "Activation staging"):
    # "l2": streamed through the L2 by the HVX contexts' own loads, each miss waited for (Hexagon
    # NN on V65/V66; the Table 4 fit); "vtcm_dma": tiles DMA'd into the VTCM while HVX computes on
    # the previous tile (V68's user DMA engine; the DMA instructions exist from V68 on)
    activation_staging: Literal["l2", "vtcm_dma"] = Field(
        "l2", description="l2: activations stream through the L2 (Hexagon NN, V65/V66); vtcm_dma: "
        "DMA'd into VTCM tiles overlapping compute (V68 and later)")

    @field_validator("opps")
    @classmethod
    def _sorted_opps(cls, v: list[Opp]) -> list[Opp]:
        return check_opps(v)

    @field_validator("activation_staging")
    @classmethod
    def _staging(cls, v: str, info: ValidationInfo) -> str:
        # the user DMA instructions (dmstart/dmwait) arrived with V68: an older Hexagon cannot
        # stage by DMA (apache/tvm src/runtime/hexagon/hexagon_user_dma.cc, __HEXAGON_ARCH__ >= 68)
        arch = info.data.get("hvx_arch")
        if v == "vtcm_dma" and arch is not None and int(arch[1:]) < 68:
            raise ValueError(f"vtcm_dma needs the user DMA engine of V68 and later; this DSP is {arch}")
        return v

    @field_validator("training_clock_mhz")
    @classmethod
    def _training_clock(cls, f: float, info: ValidationInfo) -> float:
        # the clock every DSP op runs at by default: one of the DSP's OPPs, not a silent
        # extrapolation of the cost and voltage tables (no check when the OPPs failed theirs)
        opps = info.data.get("opps")
        if opps and not any(abs(f - o.freq_mhz) < 1e-6 for o in opps):
            where = ("above the highest" if f > opps[-1].freq_mhz else
                     "below the lowest" if f < opps[0].freq_mhz else "not an")
            raise ValueError(f"{where} operating point of the DSP; its OPPs span {opp_range(opps)}")
        return f


class Gpu(_OppRange, Sourced):
    name: str
    opps: list[Opp] = Field(min_length=1)
    # bound: an Adreno 740 does ~3,000 FP32 FLOPs/cycle (1536 ALUs x FMA); 65,536 is no phone GPU
    fp32_flops_per_cycle: float = Field(gt=0, le=65_536)
    fp32_efficiency: float = Field(gt=0, le=1)
    fp16_rate: float = Field(ge=1, le=4, description="FP16 FLOPs per cycle over FP32's")
    l2_kb: float = Field(ge=0, le=65536, description="GPU L2 cache size (KB)")
    dyn_power_coeff_uw_mhz_v2: float = Field(gt=0, le=10_000)
    leakage_mw: float = Field(ge=0, le=5000)
    kernel_launch_us: float = Field(ge=0, le=1e6)
    governor: Literal["simple_ondemand", "performance"] = Field(
        "simple_ondemand", description="GPU devfreq governor (socsim.hw.gpu_dvfs); performance pins the top OPP")
    governor_upthreshold: float = Field(90, gt=0, le=100, description="simple_ondemand's upthreshold (%)")
    governor_downdifferential: float = Field(5, ge=0, lt=100, description="simple_ondemand's downdifferential (%)")

    @field_validator("opps")
    @classmethod
    def _sorted_opps(cls, v: list[Opp]) -> list[Opp]:
        return check_opps(v)

    @model_validator(mode="after")
    def _thresholds(self) -> "Gpu":
        if self.governor_downdifferential >= self.governor_upthreshold:
            raise PydanticCustomError(
                "gpu", "gpu.governor_downdifferential ({d}) must be below gpu.governor_upthreshold ({u})",
                {"fields": ("governor_downdifferential",),
                 "d": self.governor_downdifferential, "u": self.governor_upthreshold})
        return self


class Dram(Sourced):
    type: str
    # bounds: no phone DRAM is below 1 GB/s or above a few hundred; a value outside is a typo
    # (and a near-zero bandwidth would run a simulated lifetime)
    bandwidth_gbs: float = Field(ge=0.5, le=2000)
    achievable_fraction: float = Field(gt=0, le=1)
    # bounds: LPDDR latency is 100-150 ns (the specs' sources), its energy 10-100 pJ/byte, its
    # background power under a watt, a phone's capacity 1-24 GB; the bounds are 10x beyond
    latency_ns: float = Field(gt=0, le=10_000)
    energy_pj_per_byte: float = Field(gt=0, le=10_000)
    background_mw: float = Field(ge=0, le=10_000)
    capacity_gb: float = Field(gt=0, le=1024)


class FastRpc(Sourced):
    """CPU<->DSP call costs: invoke latency, cache maintenance, copies, graph preparation."""

    # bounds: a FastRPC call costs 60-450 us (the specs' sources); a second is no call.  A copy
    # slower than 1 MB/s or faster than DRAM (2000 GB/s) is a typo.
    invoke_us: float = Field(gt=0, le=1e6)
    cache_maint_us_per_mb: float = Field(ge=0, le=1e6)
    copy_gbs: float = Field(ge=0.001, le=2000)
    io_coherent: bool = True
    graph_prep_us_per_op: float = Field(ge=0, le=1e6)
    graph_prep_us_per_mb: float = Field(ge=0, le=1e6)


class ThermalNode(StrictModel):
    name: str
    # bounds: a die is ~0.3 J/K, a phone body ~60 J/K (the specs' sources); 1 mJ/K to 10 kJ/K
    # brackets any node of a phone (a smaller one makes the RC network needlessly stiff)
    capacitance_j_per_k: float = Field(ge=1e-3, le=1e4)


class ThermalLink(StrictModel):
    a: str
    b: str
    # bounds: the specs' links are 0.03-1 W/K; 1 mW/K to 100 W/K brackets any path in a phone
    conductance_w_per_k: float = Field(ge=1e-3, le=100)


class ThermalZone(StrictModel):
    """An Android-style thermal zone: a sensor on a node with trip points that cap clusters.

    A *virtual* zone reads ``sensors`` (node -> weight) instead of one ``node``: the weighted sum
    plus ``offset_c`` (Qualcomm thermal-engine ``algo_type virtual`` with ``weights``, math 0;
    msm kernel qti_virtual_sensor VIRT_WEIGHTED_AVG), or their maximum / minimum (math 2 / 1;
    VIRT_MAXIMUM / VIRT_MINIMUM).  A zone with ``targets_mhz`` caps each cluster at the listed
    frequency for the highest trip crossed (thermal-engine ``monitor``/``ss`` trig-clr-target
    tables) instead of stepping one OPP per poll (Linux ``step_wise``); docs/modeling.md, Thermal."""

    name: str
    node: str | None = Field(None, description="the node the sensor reads (or give sensors)")
    sensors: dict[str, float] | None = Field(
        None, description="virtual zone: node -> weight (C per C); the reading is combined by math")
    offset_c: float = Field(0.0, ge=-100, le=100, allow_inf_nan=False,
                            description="virtual zone: added to the weighted sum (thermal-engine compensation)")
    math: Literal["weighted", "max", "min"] = Field(
        "weighted", description="virtual zone: weighted sum + offset_c, or the maximum / minimum of the sensors")
    trips_c: list[Annotated[float, Field(ge=-40, le=200)]] = Field(default_factory=list)
    hysteresis_c: float = Field(2.0, ge=0)
    clear_c: list[Annotated[float, Field(ge=-40, le=200)]] | None = Field(
        None, description="per trip: the reading below which it clears (default: trip - hysteresis_c)")
    caps: list[str] = Field(default_factory=list, description="cluster names (or 'gpu') this zone throttles")
    targets_mhz: dict[str, list[Annotated[float, Field(gt=0, le=5000)]]] | None = Field(
        None, description="per capped cluster, its frequency cap for 1..n trips crossed (a table zone); "
                          "the cap is the highest OPP at or below it, as cpufreq's scaling_max_freq")
    polling_s: float = Field(0.25, ge=0.001, le=60, description="governor polling period (sm8250 passive polling)")

    @model_validator(mode="after")
    def _shape(self) -> "ThermalZone":
        if (self.node is None) == (self.sensors is None):
            raise PydanticCustomError("thermal", "zone '{zone}': give either node (a sensor on one node) or "
                                      "sensors (a virtual zone), not {which}",
                                      {"fields": ("node",), "zone": self.name,
                                       "which": "both" if self.node is not None else "neither"})
        if self.sensors is not None:
            if not self.sensors:
                raise PydanticCustomError("thermal", "zone '{zone}': sensors is empty",
                                          {"fields": ("sensors",), "zone": self.name})
            for node, w in self.sensors.items():
                if not (-100 <= w <= 100):   # also refuses NaN
                    raise PydanticCustomError("thermal", "zone '{zone}': sensor '{node}' weight {w} is outside "
                                              "-100..100", {"fields": ("sensors", node), "zone": self.name,
                                                            "node": node, "w": w})
        n = len(self.trips_c)
        if self.clear_c is not None:
            if len(self.clear_c) != n:
                raise PydanticCustomError("thermal", "zone '{zone}': clear_c has {k} values for the {n} trips of trips_c",
                                          {"fields": ("clear_c",), "zone": self.name, "k": len(self.clear_c), "n": n})
            for i, (t, c) in enumerate(zip(self.trips_c, self.clear_c)):
                if c > t:
                    raise PydanticCustomError("thermal", "zone '{zone}': clear_c[{i}] = {c} is above its trip "
                                              "trips_c[{i}] = {t}", {"fields": ("clear_c", i), "zone": self.name, "i": i, "c": c, "t": t})
        if self.targets_mhz is not None:
            for name, ts in self.targets_mhz.items():
                if name not in self.caps:
                    raise PydanticCustomError("thermal", "zone '{zone}': targets_mhz names '{name}', which caps "
                                              "does not list ({caps})", {"fields": ("targets_mhz", name),
                                                                         "zone": self.name, "name": name,
                                                                         "caps": ", ".join(self.caps)})
                if len(ts) != n:
                    raise PydanticCustomError("thermal", "zone '{zone}': targets_mhz.{name} has {k} values for "
                                              "{n} trips", {"fields": ("targets_mhz", name), "zone": self.name,
                                                            "name": name, "k": len(ts), "n": n})
            missing = [c for c in self.caps if c not in self.targets_mhz]
            if missing:
                raise PydanticCustomError("thermal", "zone '{zone}': caps {names} but targets_mhz gives no "
                                          "frequencies for them", {"fields": ("targets_mhz",), "zone": self.name,
                                                                   "names": ", ".join(missing)})
        return self

    def nodes_read(self) -> list[str]:
        """The nodes the zone's reading depends on."""
        return [self.node] if self.node is not None else list(self.sensors or {})

    def clears_c(self) -> tuple[float, ...]:
        """Per trip, the reading below which it clears."""
        if self.clear_c is not None:
            return tuple(float(c) for c in self.clear_c)
        return tuple(t - self.hysteresis_c for t in self.trips_c)


class Thermal(Sourced):
    nodes: list[ThermalNode] = Field(min_length=2)
    links: list[ThermalLink] = Field(min_length=1)
    ambient_node: str = "ambient"
    heat_sources: dict[str, str] = Field(description="rail (or \"battery\": the pack's I^2 R, \"charger\": its conversion loss) -> node it heats")
    zones: list[ThermalZone] = Field(default_factory=list)
    # leakage doubling every 20-30 C (Liao, He, Lepak, IEEE TCAD 24(7) 2005): 25, as the specs
    leakage_doubling_c: float = Field(25.0, ge=5, le=200, description="C per doubling of leakage; "
                                      "physical 20-30 C, bounded so leakage stays finite")

    @model_validator(mode="after")
    def _names(self) -> "Thermal":
        names = {n.name for n in self.nodes} | {self.ambient_node}
        for link in self.links:
            for end in (link.a, link.b):
                if end not in names:
                    raise ValueError(f"thermal link names unknown node {end!r}; nodes: {sorted(names)}")
        for rail, node in self.heat_sources.items():
            if node not in names:
                raise ValueError(f"heat source {rail!r} names unknown node '{node}'")
        for z in self.zones:
            for node in z.nodes_read():
                if node not in names:
                    raise ValueError(f"zone {z.name!r} names unknown node {node!r}")
        for link in self.links:
            if link.a == link.b:
                raise PydanticCustomError("thermal", "thermal link joins '{node}' to itself",
                                          {"fields": ("links",), "node": link.a})
        for z in self.zones:
            if list(z.trips_c) != sorted(z.trips_c):
                raise PydanticCustomError("thermal", "zone '{zone}': trips_c must increase, got {trips}",
                                          {"fields": ("zones",), "zone": z.name, "trips": z.trips_c})
        return self


class Battery(Sourced):
    # bounds: phone packs hold 2,000-7,000 mAh at 3.7-3.9 V nominal (the specs' sources);
    # 100,000 mAh and 2-5 V bracket any single Li-ion cell a phone carries
    capacity_mah: float = Field(gt=0, le=100_000)
    nominal_voltage_v: float = Field(ge=2, le=5)
    ocv_soc: list[tuple[float, float]] = Field(min_length=2, description="(state of charge 0..1, open-circuit V)")

    @field_validator("ocv_soc")
    @classmethod
    def _ocv_curve(cls, v: list[tuple[float, float]]) -> list[tuple[float, float]]:
        socs = [s for s, _ in v]
        volts = [u for _, u in v]
        if not all(0 <= s <= 1 for s in socs) or socs != sorted(socs) or len(set(socs)) != len(socs):
            raise ValueError(f"ocv_soc: states of charge must rise strictly within 0..1, got {socs}")
        if not all(0 < u <= 10 for u in volts) or volts != sorted(volts):
            raise ValueError(f"ocv_soc: open-circuit voltages must be positive and rise with the charge, got {volts}")
        return v
    # bound: a fresh phone cell is ~0.1 ohm, a worn one under 1 ohm
    internal_resistance_ohm: float = Field(gt=0, le=10)
    # 0.8: assumption, a default start charge (a phone that has been in use, neither full nor
    # low); a workload overrides it with environment.initial_soc
    initial_soc: float = Field(0.8, ge=0, le=1)
    thermal_node: str = "battery"
    # Charge-voltage limit of the constant-voltage phase: 4.4 V, as usual for 3.87 V-nominal
    # high-voltage LiCoO2 phone cells (the specs' battery sources); the charge current tapers as
    # OCV + I R reaches it (socsim.hw.battery).  A limit below the table's full-charge OCV stops
    # the charge short of full, as a phone's battery-protection charge limit does.
    charge_voltage_v: float = Field(4.4, gt=0, allow_inf_nan=False)
    # Switch-mode buck charger efficiency, input power to power delivered to the phone and pack:
    # 0.93, TI bq25890 datasheet (93% charge efficiency at 2 A; a 5 V x 1.5 A charger gives the
    # pack ~1.7 A).  The loss heats the charger's node (thermal heat_sources "charger").
    charger_efficiency: float = Field(0.93, gt=0, le=1)


class Platform(Sourced):
    """Power of everything not modelled as its own rail (modem idle, PMIC, sensors, screen)."""

    # bounds: a phone's platform idle is 100s of mW and a screen at full brightness ~1.5 W;
    # 20 W is beyond either
    idle_mw: float = Field(ge=0, le=20_000)
    screen_mw: float = Field(0.0, ge=0, le=20_000)


class SocSpec(Sourced):
    name: str
    marketing_name: str
    phones: list[str] = Field(default_factory=list)
    cpu: Cpu
    dsp: Dsp | None = None
    gpu: Gpu | None = None
    dram: Dram
    fastrpc: FastRpc | None = None
    platform: Platform
    thermal: Thermal
    battery: Battery

    @model_validator(mode="after")
    def _dsp_needs_rpc(self) -> "SocSpec":
        if self.dsp is not None and self.fastrpc is None:
            raise ValueError("a SoC with a DSP needs a fastrpc block")
        return self

    @model_validator(mode="after")
    def _thermal_matches_the_parts(self) -> "SocSpec":
        """What the thermal block names must exist: every rail heats a node, zones cap real
        clusters, the battery sits on a node."""
        clusters = [c.name for c in self.cpu.clusters]
        rails = rail_names(self)
        missing = [r for r in rails if r not in self.thermal.heat_sources]
        unknown = [r for r in self.thermal.heat_sources if r not in rails and r not in ("battery", "charger")]
        for i, c in enumerate(self.cpu.clusters):
            if cpu_rail(c.name) in missing and any(u.startswith(cpu_rail("")) for u in unknown):
                # a renamed cluster: its rail heats nothing and the old name's heat source is left over
                raise PydanticCustomError(
                    "cluster", "CPU cluster '{name}' (rail {rail}) is in no thermal.heat_sources entry, which "
                    "names {unknown} instead: rename one to match the other",
                    {"fields": (("cpu", "clusters", i, "name"), "thermal"), "name": c.name,
                     "rail": cpu_rail(c.name), "unknown": ", ".join(unknown)})
        if missing:
            raise PydanticCustomError("thermal", "thermal.heat_sources has no node for rail(s) {rails}: every "
                                      "rail's power heats some node (or 'ambient')",
                                      {"fields": (("thermal", "heat_sources"), "thermal"), "rails": ", ".join(missing)})
        gone = [u for u in unknown if u.startswith(cpu_rail(""))]
        if gone:
            # a cluster the heat sources (and likely the zones) name is not in cpu.clusters
            raise PydanticCustomError(
                "cluster", "thermal.heat_sources names {rail}, but cpu.clusters has no cluster '{name}' (clusters: "
                "{clusters}): add the cluster, or remove its heat source and zone caps",
                {"fields": (("cpu", "clusters"), "cpu"), "rail": gone[0], "name": gone[0][len(cpu_rail("")):],
                 "clusters": ", ".join(clusters)})
        sections = {"cdsp": "dsp", "gpu": "gpu"}   # a unit section's rail
        lacking = [u for u in unknown if u in sections and getattr(self, sections[u]) is None]
        if lacking:
            # the rail of a unit section the spec does not have (a deleted dsp: or gpu:)
            raise PydanticCustomError(
                "thermal", "thermal.heat_sources names {rail}, the rail of the {section}: section, which this "
                "spec lacks: add the section, or remove its heat source and thermal zone",
                {"fields": ((sections[lacking[0]],),), "rail": lacking[0], "section": sections[lacking[0]]})
        if unknown:
            raise PydanticCustomError("thermal", "thermal.heat_sources names {unknown}, which is no rail of this "
                                      "SoC; rails: {rails} (and 'battery', 'charger')",
                                      {"fields": (("thermal", "heat_sources", unknown[0]), "thermal"),
                                       "unknown": ", ".join(unknown),
                                       "rails": ", ".join(rails)})
        # every node must reach ambient through links, or its temperature has no bound (the
        # network solver allows a floating group, socsim.hw.thermal; a phone has none, and leakage
        # feedback on an unbounded temperature overflows)
        adj: dict[str, set[str]] = {}
        for link in self.thermal.links:
            adj.setdefault(link.a, set()).add(link.b)
            adj.setdefault(link.b, set()).add(link.a)
        seen, todo = {self.thermal.ambient_node}, [self.thermal.ambient_node]
        while todo:
            for nb in adj.get(todo.pop(), ()):
                if nb not in seen:
                    seen.add(nb)
                    todo.append(nb)
        cut = [n.name for n in self.thermal.nodes if n.name not in seen]
        if cut:
            raise PydanticCustomError("thermal", "thermal node(s) {nodes} have no path of links to '{ambient}': "
                                      "their heat could never leave the phone",
                                      {"fields": (("thermal", "links"), "thermal"), "nodes": ", ".join(cut), "ambient": self.thermal.ambient_node})
        for iz, z in enumerate(self.thermal.zones):
            for name in z.caps:
                if name not in clusters and not (name == "gpu" and self.gpu is not None):
                    raise PydanticCustomError("thermal", "zone '{zone}' caps unknown cluster '{name}'; clusters: "
                                              "{clusters}", {"fields": (("thermal", "zones", iz, "caps"), "thermal"),
                                                             "zone": z.name, "name": name,
                                                             "clusters": ", ".join(clusters)})
        nodes = {n.name for n in self.thermal.nodes} | {self.thermal.ambient_node}
        if self.battery.thermal_node not in nodes:
            raise PydanticCustomError("battery", "battery.thermal_node '{node}' is no thermal node; nodes: {nodes}",
                                      {"fields": (("battery", "thermal_node"), "battery"),
                                       "node": self.battery.thermal_node,
                                       "nodes": ", ".join(sorted(nodes))})
        return self

    def cluster(self, name: str) -> Cluster:
        for c in self.cpu.clusters:
            if c.name == name:
                return c
        raise KeyError(f"{self.name} has no CPU cluster '{name}'; clusters: {[c.name for c in self.cpu.clusters]}")


# Rail names, like Android's power rails (``cpu.<cluster>``, ``cdsp``, ``gpu``, ``dram``,
# ``platform``); the power model (socsim.hw.power) and the thermal block both name rails.
RAIL_CDSP = "cdsp"
RAIL_GPU = "gpu"
RAIL_DRAM = "dram"
RAIL_PLATFORM = "platform"


def cpu_rail(cluster_name: str) -> str:
    """Rail name of a CPU cluster (``cpu.<cluster>``; Pixel's S4M_VDD_CPUCL0 maps to cpu.little)."""
    return f"cpu.{cluster_name}"


def rail_names(soc: SocSpec) -> tuple[str, ...]:
    """All rails of a SoC in a fixed order: CPU clusters, cdsp, gpu (if present), dram, platform."""
    rails = [cpu_rail(c.name) for c in soc.cpu.clusters]
    if soc.dsp is not None:
        rails.append(RAIL_CDSP)
    if soc.gpu is not None:
        rails.append(RAIL_GPU)
    return (*rails, RAIL_DRAM, RAIL_PLATFORM)


def with_activation_staging(soc: SocSpec, staging: str | None) -> SocSpec:
    """``soc`` with its DSP's ``activation_staging`` replaced (a workload's ``dsp.activation_staging``;
    None: unchanged).  ValueError when the SoC has no DSP or its Hexagon cannot stage that way."""
    if staging is None or (soc.dsp is not None and soc.dsp.activation_staging == staging):
        return soc
    if soc.dsp is None:
        raise ValueError(f"{soc.name} has no DSP")
    try:
        dsp = Dsp.model_validate({**soc.dsp.model_dump(), "activation_staging": staging})
    except ValueError as e:   # pydantic's ValidationError: the validator's message
        errs = getattr(e, "errors", None)
        msg = errs()[0]["msg"] if callable(errs) else str(e)
        raise ValueError(msg.removeprefix("Value error, ")) from None
    return soc.model_copy(update={"dsp": dsp})

"""``socsim op``: time one operator on one unit at one operating point."""
from __future__ import annotations

from typing import Any

from socsim.engine.context import PlanContext
from socsim.engine.cores import check_clusters_mhz, check_unit_mhz, clusters_of
from socsim.engine.oracle import CostOracle
from socsim.errors import InputError
from socsim.spec import load_soc, workload_from_dict
from socsim.spec.soc import with_activation_staging
from socsim.workload.opkinds import KINDS, OpKind, UnknownOpKind, lookup
from socsim.workload.ops import Op, make_params


def _buildable(kind: OpKind) -> bool:
    """Whether ``socsim op`` can build a kind from its options: convolutions and their gradients,
    forward pools, GEMMs, and every kind whose shape is an element count."""
    return kind.shape != "pool" or kind.backward == ""


def _parse_shape(s: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(x) for x in s.lower().split("x"))
    except ValueError:
        raise InputError("expected CxHxW (e.g. 64x32x32) or N", field="--in", value=s) from None
    if not dims or any(d <= 0 for d in dims):
        raise InputError("dimensions must be positive", field="--in", value=s)
    return dims


def _cpu_freq(soc, core_ids: tuple[int, ...], freq: str | float) -> str | float:
    """``--freq`` for CPU cores: max|mid|min or MHz that some cluster of the cores can run."""
    if isinstance(freq, str) and freq.strip().lower() in ("max", "mid", "min"):
        return freq.strip().lower()
    clusters = clusters_of(soc, core_ids)
    rng = ", ".join(f"{c.name} {c.min_mhz:g}-{c.max_mhz:g} MHz" for c in clusters)
    try:
        if isinstance(freq, bool):
            raise ValueError
        mhz = float(freq)
        if mhz != mhz:
            raise ValueError
    except (TypeError, ValueError):
        raise InputError(f"expected max|mid|min or MHz (CPU clusters of the cores: {rng})",
                         field="--freq", value=freq) from None
    try:
        check_clusters_mhz(soc, clusters, mhz, "--freq")
    except InputError as e:
        raise InputError(f"{e.message}; the cores' clusters run at {rng}", field="--freq", value=freq) from None
    return mhz


def make_op(kind: str, batch: int, in_shape: str, out_channels: int | None, kernel: int, stride: int,
            pad: int | None, dtype: str) -> Op:
    """Build a single op the way the training graph would."""
    for opt, v in (("--batch", batch), ("--kernel", kernel), ("--stride", stride), ("--out-channels", out_channels)):
        if v is not None and v <= 0:
            raise InputError("must be positive", field=opt, value=v)
    if pad is not None and pad < 0:
        raise InputError("must not be negative", field="--pad", value=pad)
    dims = _parse_shape(in_shape)
    esize = 4 if dtype == "fp32" else 1
    try:
        spec = lookup(kind)
    except UnknownOpKind:
        spec = None
    if spec is None or not _buildable(spec):
        known = ", ".join(k for k in KINDS if _buildable(lookup(k)))
        raise InputError(f"unknown op kind; known: {known}", field="KIND", value=kind)
    if spec.shape in ("conv", "pool"):
        if len(dims) != 3:
            raise InputError("expected CxHxW", field="--in", value=in_shape)
        c, h, w = dims
        k = kernel
        p = (k // 2) if pad is None else pad
        if spec.shape == "pool":
            p = 0 if pad is None else pad
        oh = (h + 2 * p - k) // stride + 1
        ow = (w + 2 * p - k) // stride + 1
        if oh <= 0 or ow <= 0:
            raise InputError(f"a {k}x{k} window with stride {stride} does not fit", field="--in", value=in_shape)
        if spec.shape == "pool":
            n_out = batch * c * oh * ow
            return Op(f"{kind}", kind, "forward", "op", dtype, make_params(batch=batch, c=c, h=h, w=w, k=k, stride=stride, oh=oh, ow=ow),
                      flops=n_out * k * k, bytes_read=batch * c * h * w * esize, bytes_written=n_out * esize,
                      out_bytes=n_out * esize)
        depthwise = spec.kernel == "depthwise"
        if depthwise and out_channels is not None and out_channels != c:
            raise InputError(f"a depthwise convolution has as many output channels as input channels ({c})",
                             field="--out-channels", value=out_channels)
        co = c if depthwise else (out_channels or c)
        groups = c if depthwise else 1
        macs = batch * co * oh * ow * k * k * (1 if depthwise else c)
        w_bytes = co * k * k * (1 if depthwise else c) * esize
        x_bytes = batch * c * h * w * esize
        y_bytes = batch * co * oh * ow * (4 if dtype == "int8" else esize)
        if spec.backward == "wgrad":
            read, written = x_bytes + batch * co * oh * ow * esize, w_bytes
        elif spec.backward == "dgrad":
            read, written = batch * co * oh * ow * esize + w_bytes, x_bytes
        else:
            read, written = x_bytes + w_bytes, y_bytes
        params = make_params(batch=batch, cin=c, h=h, w=w, cout=co, kh=k, kw=k, stride=stride, pad=p,
                             groups=groups, oh=oh, ow=ow)
        phase = {"wgrad": "weight_grad", "dgrad": "error_grad"}.get(spec.backward, "forward")
        return Op(kind, kind, phase, "op", dtype, params, macs=macs, bytes_read=read, bytes_written=written,
                  weight_bytes=w_bytes, out_bytes=written)
    if spec.shape == "gemm":
        if len(dims) != 2 and len(dims) != 1:
            raise InputError("gemm takes --in KxN (with --batch as M) or K", field="--in", value=in_shape)
        kdim = dims[0]
        n = dims[1] if len(dims) == 2 else (out_channels or kdim)
        m = batch
        return Op("gemm", "gemm", "forward", "op", dtype, make_params(batch=batch, count=1, m=m, k=kdim, n=n),
                  macs=m * kdim * n,
                  bytes_read=(m * kdim + kdim * n) * esize, bytes_written=m * n * (4 if dtype == "int8" else esize),
                  weight_bytes=kdim * n * esize, out_bytes=m * n * esize)
    n = batch  # an element count: n elements in and out
    for d in dims:
        n *= d
    in_b = n * (4 if spec.reads_int32 and dtype != "fp32" else esize)
    return Op(kind, kind, "forward", "op", "int32" if in_b == 4 * n and dtype != "fp32" else dtype,
              make_params(n=n), flops=n, bytes_read=in_b, bytes_written=n * esize, out_bytes=n * esize)


def time_op(soc_name: str, unit: str, kind: str, *, batch: int = 1, in_shape: str = "64x32x32",
            out_channels: int | None = None, kernel: int = 3, stride: int = 1, pad: int | None = None,
            dtype: str | None = None, cores: str | None = None, freq: str | float | None = None,
            batch_padding: bool = True, staging: str | None = None) -> dict[str, Any]:
    """Time one op on ``unit`` of ``soc_name``.

    ``freq``: max|mid|min (the unit's highest, middle or lowest OPP) or MHz, floored to the OPP at
    or below it as ``cpu.freq`` is; a frequency above the unit's top OPP or below its lowest is an
    InputError naming ``--freq`` with the OPP range.  On the CPU it applies to every cluster the
    cores span (an error only when no such cluster can run it).  Default (None): the top OPP, on
    the DSP the SoC's training clock (``dsp.training_clock_mhz``, what a workload's DSP runs at).
    ``staging``: the DSP's activation staging (l2 | vtcm_dma; None: the SoC's)."""
    soc = load_soc(soc_name)
    if staging is not None:
        if unit not in ("dsp", "hmx"):
            raise InputError(f"--staging is the DSP's; it does not apply to --unit {unit}", field="--staging",
                             value=staging)
        try:
            soc = with_activation_staging(soc, staging)
        except ValueError as e:
            raise InputError(str(e), field="--staging", value=staging) from None
    if cores is not None and unit != "cpu":   # the DSP and the GPU have no core sets
        raise InputError(f"--cores chooses CPU cores; it does not apply to --unit {unit}", field="--cores",
                         value=cores)
    cores = "big1" if cores is None else cores
    dtype = dtype or ("int8" if unit in ("dsp", "hmx") else "fp32")
    op = make_op(kind, batch, in_shape, out_channels, kernel, stride, pad, dtype)
    # the op's tensors must fit the phone's memory, as a run's plan must (socsim.engine.sim)
    need = op.bytes_read + op.bytes_written
    if need > soc.dram.capacity_gb * (1 << 30):
        raise InputError(f"the op's tensors take {need / (1 << 30):.1f} GiB, more than the "
                         f"{soc.dram.capacity_gb:g} GiB DRAM of {soc.name}",
                         field="--batch" if batch > 1 else "--in", value=batch if batch > 1 else in_shape)
    oracle = CostOracle(soc, dsp_batch_padding=batch_padding)
    wl = workload_from_dict({"name": "op", "model": "lenet", "input": [1, 28, 28], "batch_size": 1, "batches": 1})
    ctx = PlanContext(soc, wl, oracle)
    if unit == "cpu":
        core_ids = ctx.cores(cores, field="--cores")
        fsetting = _cpu_freq(soc, core_ids, "max" if freq is None else freq)
        cfg = oracle.config("cpu", cores=core_ids, freqs=ctx.freqs(core_ids, fsetting))
    elif unit in ("dsp", "hmx"):
        if soc.dsp is None:
            raise InputError(f"{soc.name} has no DSP", field="--unit", value=unit)
        if unit == "hmx" and soc.dsp.hmx is None:
            raise InputError(f"{soc.name}'s {soc.dsp.name} ({soc.dsp.hvx_arch}) has no HMX; "
                             "HMX arrived with Hexagon V68", field="--unit", value=unit)
        # default: the clock the seed systems trained at (the engine's default for dsp.freq_mhz);
        # HMX runs on the cDSP's clock
        mhz = soc.dsp.training_clock_mhz if freq is None else check_unit_mhz(soc, "dsp", freq, "--freq")
        cfg = oracle.config(unit, mhz=mhz)
    else:
        if soc.gpu is None:
            raise InputError(f"{soc.name} has no GPU", field="--unit", value=unit)
        cfg = oracle.config("gpu", gpu_mhz=check_unit_mhz(soc, "gpu", "max" if freq is None else freq, "--freq"))
    cost = oracle.cost(op, unit, cfg)
    if cost is None:
        raise InputError(f"the {unit} of {soc.name} cannot run {kind} in {dtype}", field="--unit", value=unit)
    detail = dict(cost.detail)
    # Like a profiler on the phone: a standalone DSP op pays its own FastRPC call (inside a
    # training graph the engine charges calls at CPU<->DSP switches instead).
    time_s = cost.time_s
    if unit in ("dsp", "hmx"):
        from socsim.hw.dsp import standalone_time_s
        time_s = standalone_time_s(cost)
    # ``cycles`` are the unit's compute cycles (the HVX/HMX/CPU kernel alone, data resident);
    # ``stall_cycles`` the memory time not hidden under them (``stall_s``) at the same clock, and
    # ``total_cycles`` their sum, ``kernel_time_s`` in cycles.  V66 and V68 HVX run a conv in the
    # same compute cycles (LLVM's HVX itineraries are equal for every instruction the kernels
    # issue, docs/hvx.md "Hexagon generations and HMX"); their L2/VTCM and staging differ, so the
    # totals do.  The standalone call (``detail.call_overhead_s``) is in ``time_s`` only.
    stall_cycles = int(round(cost.stall_s * cost.freq_mhz * 1e6))
    return {"soc": soc.name, "unit": unit, "kind": kind, "dtype": dtype, "params": dict(op.params),
            "time_s": time_s, "time_ms": time_s * 1e3, "kernel_time_s": cost.time_s, "cycles": cost.cycles,
            "stall_cycles": stall_cycles, "total_cycles": cost.cycles + stall_cycles,
            "freq_mhz": cost.freq_mhz, "stall_s": cost.stall_s, "bytes": cost.bytes,
            "dram_bytes": cost.dram_bytes, "macs": op.macs, "activity": cost.activity,
            "config": {"cores": list(cfg.cores)} if unit == "cpu" else {},
            "detail": detail}

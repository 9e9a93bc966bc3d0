"""``socsim spec schema|template|check``: the JSON Schema of a SoC spec (from the pydantic
models), an annotated YAML template with every field, its unit and where to look for its value,
and the figures a spec implies (peak FLOP/s per cluster, DRAM bandwidth, DSP rate)."""
from __future__ import annotations

import json
import types
import typing
from typing import Any

import yaml
from pydantic import BaseModel

from socsim.spec.soc import SocSpec

#: unit of a field, from its name's suffix (longest suffix first)
UNITS: tuple[tuple[str, str], ...] = (
    ("_uw_mhz_v2", "uW per MHz per V^2 (dynamic power = C f V^2)"), ("_pj_per_byte", "pJ per byte"),
    ("_us_per_mb", "us per MB"), ("_us_per_op", "us per op"), ("_j_per_k", "J/K"),
    ("_w_per_k", "W/K"), ("_mw_per_core", "mW per core"), ("_per_cycle", "per cycle per core"),
    ("_per_context", "per cycle per HVX context"), ("_mhz", "MHz"), ("_mv", "mV"), ("_kb", "KiB"),
    ("_mb", "MiB"), ("_gb", "GiB"), ("_gbs", "GB/s"), ("_ns", "ns"), ("_us", "us"), ("_ms", "ms"),
    ("_mw", "mW"), ("_mah", "mAh"), ("_ohm", "ohm"), ("_cycles", "cycles"), ("_c", "deg C"),
    ("_v", "V"), ("_s", "s"), ("_w", "W"))

#: where to look for a block's numbers (the template's hint beside each block)
WHERE: dict[str, str] = {
    "cpu": "the SoC vendor's product brief (cores, clocks), Arm's core TRMs and software optimisation "
           "guides (issue width, NEON pipes, caches), the kernel's cpufreq tables and device trees "
           "(OPPs, voltages), freqbench or AnandTech (power per core)",
    "dsp": "the Hexagon SDK and QEMU machine configs (threads, HVX contexts, VTCM, L2), the SoC brief "
           "(Hexagon version), the cDSP clock plan in the device tree",
    "gpu": "the Adreno generation's public ALU counts and the SoC's GPU clock plan (device tree)",
    "dram": "the SoC brief (LPDDR type, channels, max data rate: bandwidth = rate x bus bytes), "
            "JEDEC (latency), Micron/Samsung power calculators (pJ/byte, background)",
    "fastrpc": "the Hexagon SDK's FastRPC docs and published invoke latencies (calibration/)",
    "platform": "a power monitor's idle reading of the phone (screen off), or a published one",
    "thermal": "the phone's thermal zones (device tree / thermal-engine), an RC fit to a heat-up curve",
    "battery": "the phone's spec sheet (mAh, V), the cell's datasheet (OCV curve, resistance)",
}


def schema() -> str:
    """The JSON Schema of a SoC spec, as pydantic derives it (sorted, indented)."""
    return json.dumps(SocSpec.model_json_schema(), indent=2, sort_keys=True) + "\n"


def _unit(name: str) -> str:
    return next((u for suffix, u in UNITS if name.endswith(suffix)), "")


def _type_name(ann: Any) -> str:
    """``list[int]``, ``float | None``, ``one of lru|plru`` for a field's annotation."""
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        return "one of " + "|".join(str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is not None:
        return f"{getattr(origin, '__name__', origin)}[{', '.join(_type_name(a) for a in args)}]"
    return "None" if ann is type(None) else getattr(ann, "__name__", str(ann))


def _comment(model: type[BaseModel], key: str) -> str:
    f = model.model_fields[key]
    bits = [_type_name(f.annotation)]
    if u := _unit(key):
        bits.append(u)
    if f.description:
        bits.append(f.description)
    return "; ".join(bits)


def _scalar(v: Any) -> str:
    return yaml.safe_dump(v, default_flow_style=True, width=10_000).strip().removesuffix("...").strip()


def _inner(ann: Any) -> type[BaseModel] | None:
    """The pydantic model a field holds (directly, in a list, or as an Optional)."""
    for a in (ann, *typing.get_args(ann)):
        if isinstance(a, type) and issubclass(a, BaseModel):
            return a
        for b in typing.get_args(a):
            if isinstance(b, type) and issubclass(b, BaseModel):
                return b
    return None


def _emit(model: type[BaseModel], data: dict, indent: int, out: list[str]) -> None:
    pad = " " * indent
    for key, f in model.model_fields.items():
        if key not in data:
            continue
        v = data[key]
        sub = _inner(f.annotation)
        note = _comment(model, key)
        if key == "source":
            note = "str; required: where this block's numbers come from (a public document or a " \
                   "calibration/ entry); mark each guess 'assumption' in sources"
        elif key == "sources":
            note = "field -> its own source where it differs from the block's (or 'assumption: why')"
        if key in WHERE and indent == 0:
            out.append(f"{pad}# {key}: look in {WHERE[key]}")
        if sub is not None and isinstance(v, dict):
            out.append(f"{pad}{key}:   # {note}")
            _emit(sub, v, indent + 2, out)
        elif sub is not None and isinstance(v, list) and v and isinstance(v[0], dict) and \
                any(isinstance(x, (dict, list)) for x in v[0].values()):
            out.append(f"{pad}{key}:   # {note}")
            for item in v:
                lines: list[str] = []
                _emit(sub, item, indent + 4, lines)
                lines[0] = f"{pad}  - {lines[0].lstrip()}"
                out.extend(lines)
        else:
            out.append(f"{pad}{key}: {_scalar(v)}   # {note}")


def template(reference: SocSpec, name: str = "myphone") -> str:
    """An annotated YAML template of every field of a SoC spec, filled with ``reference``'s
    values (so it validates as written) and with each block's source reset: replace the values
    with the new phone's and name their sources."""
    data = reference.model_dump(mode="json")
    data.update(name=name, marketing_name=f"{name} (replace)", phones=[])

    def reset(d: Any) -> None:
        if isinstance(d, dict):
            if "source" in d:
                d["source"] = f"values of {reference.name} (socsim spec template): replace them " \
                              "with this phone's and cite each"
                d["sources"] = {}
            for v in d.values():
                reset(v)
        elif isinstance(d, list):
            for v in d:
                reset(v)
    reset(data)
    head = [f"# A SoC spec for socsim, every field with its type and unit.  The values are "
            f"{reference.name}'s ({reference.marketing_name}):",
            "# replace each with your phone's, put its source in the block's 'source' or "
            "'sources' (or say 'assumption: why'),",
            "# then run: socsim spec check THIS.yaml   (docs/adding-a-phone.md walks through one)"]
    body: list[str] = []
    _emit(SocSpec, data, 0, body)
    return "\n".join(head + body) + "\n"


def derived(spec: SocSpec) -> list[tuple[str, str]]:
    """The figures a spec implies, as (what, value) rows: peak FP32 FLOP/s and INT8 MAC/s of
    each CPU cluster at its top OPP, DRAM bandwidth, the DSP's INT8 MAC rate, the GPU's FP32."""
    rows: list[tuple[str, str]] = []
    for c in spec.cpu.clusters:
        n, f = len(c.core_ids), c.max_mhz * 1e6
        rows.append((f"cpu.{c.name}", f"{n}x {c.core_type} @ {c.max_mhz:g} MHz: "
                     f"peak {n * f * c.fp32_flops_per_cycle / 1e9:.1f} GFLOP/s fp32 "
                     f"({n * f * c.fp32_flops_per_cycle * c.fp32_efficiency / 1e9:.1f} sustained), "
                     f"{n * f * c.int8_macs_per_cycle / 1e9:.1f} GMAC/s int8"))
    d = spec.dram
    rows.append(("dram", f"{d.type}: {d.bandwidth_gbs:g} GB/s peak, "
                 f"{d.bandwidth_gbs * d.achievable_fraction:.1f} GB/s achievable, {d.capacity_gb:g} GiB"))
    if spec.dsp is not None:
        s = spec.dsp
        rate = s.hvx_contexts * s.int8_macs_per_cycle_per_context
        rows.append(("dsp", f"{s.name} ({s.hvx_arch}): {rate} int8 MAC/cycle, "
                     f"{rate * s.training_clock_mhz / 1e3:.0f} GMAC/s at the training clock "
                     f"{s.training_clock_mhz:g} MHz, {rate * s.max_mhz / 1e3:.0f} at {s.max_mhz:g} MHz"))
    if spec.gpu is not None:
        g = spec.gpu
        rows.append(("gpu", f"{g.name}: peak {g.fp32_flops_per_cycle * g.max_mhz / 1e3:.0f} GFLOP/s "
                     f"fp32 at {g.max_mhz:g} MHz"))
    rows.append(("battery", f"{spec.battery.capacity_mah:g} mAh, "
                 f"{spec.battery.capacity_mah * spec.battery.nominal_voltage_v / 1e3:.1f} Wh"))
    return rows

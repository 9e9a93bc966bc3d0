"""Read a measurement file (any of the formats of :mod:`socsim.fidelity.formats`) into a
:class:`~socsim.fidelity.cases.Suite`; every error is an InputError naming file, field, value."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from socsim.errors import InputError
from socsim.fidelity.cases import Case, RatioCase, Suite, TableCases
from socsim.fidelity.formats import CORE_SET_NAME, GENERAL_FORMAT, GeneralFile, MinEnergyFile, NcnnFile, Row
from socsim.fidelity.ncnn import ncnn_suite
from socsim.spec import load_soc
from socsim.spec.loader import _Lines, load_yaml, validate, validation_to_input_error
from socsim.workload.model import ModelError
from socsim.workload.zoo import canonical_name

#: frameworks the Min-Energy format names -> the socsim scheduler that runs as they do
FRAMEWORKS = {"mnn (cpu, fp32)": "mnn-fp32", "mnn (cpu, int8)": "mnn-int8", "tflite (cpu, fp32)": "tflite-fp32",
              "pytorch (cpu, fp32)": "pytorch", "mnn (gpu, fp32)": "mnn-fp32-gpu"}


def load_measurements(path: str | Path) -> Suite:
    """The measurement file at ``path``, its format recognised from its top level: a list of
    devices (ncnn), ``format: socsim-fidelity/1``, or a Min-Energy table (``levels`` and ``rows``)."""
    file = str(path)
    data, lines = load_yaml(path)
    if isinstance(data, list):
        return ncnn_suite(_validate_list(data, lines, file), lines, file)
    if isinstance(data, dict) and "format" in data:
        if data["format"] != GENERAL_FORMAT:
            raise InputError(f"unknown measurement format; this socsim reads {GENERAL_FORMAT}", file=file,
                             field="format", value=data["format"], line=lines.nearest(("format",)))
        return general_suite(validate(GeneralFile, data, file, lines), data, lines, file)
    if isinstance(data, dict) and "levels" in data and "rows" in data:
        return minenergy_suite(validate(MinEnergyFile, data, file, lines), lines, file)
    raise InputError("not a measurement file: expected a list of ncnn devices, a mapping with 'format: "
                     f"{GENERAL_FORMAT}', or a Min-Energy table (with 'levels' and 'rows'); see docs/fidelity.md",
                     file=file, line=1)


def _validate_list(data: list, lines: _Lines, file: str) -> NcnnFile:
    """The ncnn list, validated; errors name the list's own paths (``0.runs.1.threads``)."""
    try:
        return NcnnFile.model_validate({"devices": data})
    except ValidationError as e:
        shifted = _Lines()
        shifted.lines = {("devices", *k): v for k, v in lines.lines.items()}
        err = validation_to_input_error(e, {"devices": data}, file, shifted)
        field = (err.field or "").removeprefix("devices.").removeprefix("devices") or None
        raise InputError(err.message, file=file, field=field, value=err.value, line=err.line) from None


def check_soc(name: str, file: str, field: str, line: int | None) -> str:
    """``name`` if socsim has that SoC, else an InputError at ``field``."""
    try:
        load_soc(name)
    except InputError as e:
        raise InputError(e.message, file=file, field=field, value=name, line=line) from None
    return name


def check_model(name: str, file: str, field: str, line: int | None) -> str:
    """The zoo's name for ``name``, else an InputError at ``field``."""
    try:
        return canonical_name(name)
    except ModelError as e:
        raise InputError(e.message, file=file, field=field, value=name, line=line) from None


def nearest_opp(cluster: Any, mhz: float) -> float:
    """The cluster's OPP nearest ``mhz`` (the lower one on a tie)."""
    return min((o.freq_mhz for o in cluster.opps), key=lambda f: (abs(f - mhz), f))


def minenergy_suite(t: MinEnergyFile, lines: _Lines, file: str) -> Suite:
    """One absolute table: every core set at every level, on the table's phone, userspace
    governor at each cluster's OPP nearest the level's frequency."""
    soc = check_soc(t.soc, file, "soc", lines.nearest(("soc",)))
    model = check_model(t.model, file, "model", lines.nearest(("model",)))
    scheduler = FRAMEWORKS.get(t.framework.strip().lower())
    if scheduler is None:
        raise InputError(f"unknown framework; socsim runs {', '.join(sorted(FRAMEWORKS))} (case does not matter)",
                         file=file, field="framework", value=t.framework, line=lines.nearest(("framework",)))
    spec = load_soc(soc)
    little, bigs = spec.cpu.clusters[0], spec.cpu.clusters[1:]
    name = Path(file).stem
    cases = []
    for core_set, row in t.rows.items():
        kind, n = CORE_SET_NAME.match(core_set).groups()  # type: ignore[union-attr]
        for i, level in enumerate(t.levels):
            freq = {little.name: nearest_opp(little, t.little_ghz[i] * 1000)}
            freq.update({c.name: nearest_opp(c, t.big_ghz[i] * 1000) for c in bigs})
            cases.append(Case(table=name, id=f"{core_set}@{level}", where=f"rows.{core_set}",
                              line=lines.nearest(("rows", core_set)), soc=soc, model=model, input=tuple(t.input),
                              num_classes=t.num_classes, batch=t.batch, mode="train", scheduler=scheduler,
                              cores=f"{kind.lower()}{n}", freq=freq, governor="userspace",
                              time_s=row.time_s[i], energy_j=row.energy_j[i], device=t.source))
    notes = [f"{t.framework} -> socsim scheduler {scheduler}; {len(t.levels)} levels at the nearest OPP of each "
             f"cluster, userspace governor; {t.num_classes} classes"
             + (" (the table gives none: assumed, as workloads/min_energy_alexnet.yaml)" if "num_classes" not in
                t.model_fields_set else ""),
             "simulated energy: the run's training energy (the idle phone's baseline subtracted) per batch"]
    return Suite(file=file, format="minenergy-table", source=t.source,
                 tables=[TableCases(name, "absolute", cases)], notes=notes)


def general_suite(f: GeneralFile, data: dict, lines: _Lines, file: str) -> Suite:
    """socsim's own format: each row as written (a table's ``defaults`` filled in)."""
    tables = []
    for ti, table in enumerate(f.tables):
        cases: list[Case] = []
        for ri, raw in enumerate(table.rows):
            where = ("tables", ti, "rows", ri)
            row = _row(table.defaults, raw, where, lines, file)
            field = ".".join(map(str, where))
            line = lines.nearest(where)
            if any(c.id == row.id for c in cases):
                raise InputError("two rows of the table have this id", file=file, field=f"{field}.id", value=row.id,
                                 line=line)
            soc = check_soc(row.soc, file, f"{field}.soc", line)
            model = check_model(row.model, file, f"{field}.model", line)
            governor = row.governor or ("userspace" if row.freq != "max" else "schedutil")
            cores = row.cores
            cases.append(Case(table=table.name, id=row.id, where=field, line=line, soc=soc, model=model,
                              input=tuple(row.input), num_classes=row.num_classes, batch=row.batch, mode=row.mode,
                              scheduler=row.scheduler, cores=cores, freq=row.freq, governor=governor,
                              time_s=row.time_s, energy_j=row.energy_j, device=row.device,
                              background=None if row.background is None else
                              (("big", row.background.big), ("little", row.background.little))))
        ids = {c.id for c in cases}
        ratios = []
        for qi, r in enumerate(table.ratios):
            for key in ("num", "den"):
                if getattr(r, key) not in ids:
                    loc = ("tables", ti, "ratios", qi, key)
                    raise InputError("no row of the table has this id", file=file, field=".".join(map(str, loc)),
                                     value=getattr(r, key), line=lines.nearest(loc))
            times = {c.id: c.time_s for c in cases}
            ratios.append(RatioCase(table=table.name, kind=r.kind, name=r.name, num=r.num, den=r.den,
                                    where=f"tables.{ti}.ratios.{qi}", measured=times[r.num] / times[r.den]))
        if table.compare == "ratios" and not ratios:
            raise InputError("a table that compares ratios needs at least one ratio", file=file,
                             field=f"tables.{ti}.ratios", line=lines.nearest(("tables", ti)))
        tables.append(TableCases(table.name, table.compare, cases, ratios))
    return Suite(file=file, format=GENERAL_FORMAT, source=f.source, tables=tables, notes=list(f.notes))


def _row(defaults: dict, raw: dict, where: tuple, lines: _Lines, file: str) -> Row:
    """A row with the table's defaults filled in, validated; an error names the row's field
    (and the line of the default when the value came from ``defaults``)."""
    if not isinstance(raw, dict):
        raise InputError("a row is a mapping of fields", file=file, field=".".join(map(str, where)), value=raw,
                         line=lines.nearest(where))
    merged = {**defaults, **raw}
    local = _Lines()
    table = where[:2]
    for k in merged:
        src = where + (k,) if k in raw else table + ("defaults", k)
        local.lines.update({(k, *p[len(src):]): v for p, v in lines.lines.items() if p[:len(src)] == src})
    local.lines[()] = lines.nearest(where) or 1
    try:
        return Row.model_validate(merged)
    except ValidationError as e:
        raise validation_to_input_error(e, merged, file, local, prefix=where) from None

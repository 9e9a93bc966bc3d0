"""Resolving a workload's ``model``: an ONNX file (a name ending in ``.onnx``, relative to the
workload file's folder), or a name registered under the entry-point group ``socsim.models``
(the zoo's models and any plugin's; docs/plugins.md, "Model plugins").

A plugin's entry point names a :class:`~socsim.workload.modeldef.ModelDef` or a callable
``build(b: NetBuilder) -> Model``.  A plugin that fails to load, or takes a zoo model's name, is
listed with its problem by ``socsim list models``; choosing it is an input error.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from socsim.workload import onnx_import, zoo
from socsim.workload.model import Model, ModelError
from socsim.workload.modeldef import ModelDef, instantiate

GROUP = "socsim.models"


@dataclass(frozen=True)
class Entry:
    """One registered model: its definition, or the error that stops it loading."""

    name: str
    target: str
    defn: ModelDef | None
    error: str | None = None
    builtin: bool = False


def _as_def(obj: object) -> ModelDef:
    if isinstance(obj, ModelDef):
        return obj
    if callable(obj):
        return ModelDef(obj)
    raise TypeError(f"expected a socsim.workload.modeldef.ModelDef or a callable "
                    f"build(NetBuilder) -> Model, got {type(obj).__name__}")


def discover() -> dict[str, Entry]:
    """Every registered model by name: the zoo first (from its entry points, or from the zoo
    itself where the installed metadata predates them), then plugins by name."""
    out: dict[str, Entry] = {n: Entry(n, f"socsim.workload.zoo:{n.replace('-', '_')}", d, None, True)
                             for n, d in zoo.ZOO.items()}
    taken = {zoo.normalise(n) for n in out}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: (e.name, e.value)):
        if ep.value.startswith("socsim.workload.zoo:") or ep.name in out:
            if ep.name in out and not ep.value.startswith("socsim.workload.zoo:"):
                key = f"{ep.name} ({ep.value})"
                out[key] = Entry(key, ep.value, None, "name taken by another model; rename the entry point")
            continue
        if zoo.normalise(ep.name) in taken or zoo.normalise(ep.name) in zoo.ALIASES:
            key = f"{ep.name} ({ep.value})"
            out[key] = Entry(key, ep.value, None, "name taken by a zoo model; rename the entry point")
            continue
        try:
            out[ep.name] = Entry(ep.name, ep.value, _as_def(ep.load()))
        except Exception as e:  # a broken plugin must not stop the others
            out[ep.name] = Entry(ep.name, ep.value, None, f"{type(e).__name__}: {e}")
        taken.add(zoo.normalise(ep.name))
    return out


def list_models() -> list[str]:
    """Names of the models that load (zoo and plugins)."""
    return [n for n, e in discover().items() if e.defn is not None]


def canonical_name(name: str) -> str:
    """A registered model's canonical name from any spelling (``"VGG-16"`` -> ``vgg16``)."""
    try:
        return zoo.canonical_name(name)
    except ModelError:
        pass
    entries = discover()
    for n, e in entries.items():
        if zoo.normalise(n) == zoo.normalise(name) or n == name:
            if e.defn is None:
                raise ModelError("model", name, f"model plugin {e.target} is broken: {e.error}")
            return n
    known = ", ".join(n for n, e in entries.items() if e.defn is not None)
    raise ModelError("model", name, f"unknown model; known models: {known}; or give the path of "
                     "an .onnx file")


def resolve_path(name: str, base: str | Path | None) -> Path:
    """Where an ONNX ``model`` lives: as given if absolute, else relative to the workload file's
    folder (``base``), or to the working directory for a workload given without a file."""
    p = Path(name).expanduser()
    if p.is_absolute() or base is None:
        return p
    return Path(base).parent / p


def build_model(name: str, input_chw: tuple[int, ...], num_classes: int,
                workload_file: str | Path | None = None) -> Model:
    """The model ``name`` names (an ONNX file or a registered model) for one sample shaped
    ``input_chw``; ModelError on a bad name, file, input or class count."""
    if onnx_import.is_onnx(name):
        return onnx_import.import_onnx(resolve_path(str(name), workload_file), input_chw,
                                       num_classes, name=str(name))
    canon = canonical_name(name)
    defn = zoo.ZOO.get(canon) or discover()[canon].defn
    assert defn is not None
    return instantiate(defn, canon, input_chw, num_classes)

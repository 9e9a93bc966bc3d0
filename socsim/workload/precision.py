"""Precision algorithms: translate an FP32 training graph into its mixed-precision form.

``fp32`` is the identity; ``mnn-int8`` and ``qat`` (:mod:`socsim.workload.mnn_int8`) are
INT8 training as MNN's CPU kernels run it and MNN's fake-quantised training; ``niti`` (:mod:`socsim.workload.niti`) and ``octo``
(:mod:`socsim.workload.octo`) rewrite op by op with a :class:`socsim.workload.rewriter.Rewriter`,
which keeps the renaming of tensors consistent so that liveness and ``saved_bytes`` stay exact.
"""
from __future__ import annotations

from functools import lru_cache, partial
from typing import Callable

from socsim.workload import memory, mnn_int8, niti, octo
from socsim.workload.graph import TrainingGraph, training_graph
from socsim.workload.model import ModelError
from socsim.workload.ops import Op, as_training_step
from socsim.workload.models import build_model

PRECISIONS: tuple[str, ...] = ("fp32", "niti", "octo", "mnn-int8", "qat")


def list_precisions() -> list[str]:
    return list(PRECISIONS)


def translate(graph: TrainingGraph, precision: str) -> TrainingGraph:
    """``graph`` in ``precision`` (memoised per graph object and precision).

    Raises :class:`ModelError` (field ``precision``) for an unknown algorithm.
    """
    key = str(precision).strip().lower()
    if key not in PRECISIONS:
        raise ModelError("precision", precision,
                         f"unknown precision; known: {', '.join(PRECISIONS)}")
    if graph.precision == key:
        return graph
    base = graph if graph.precision == "fp32" else training_graph(graph.model, graph.batch)
    return base if key == "fp32" else _translate(base, key)


@lru_cache(maxsize=64)
def _translate(graph: TrainingGraph, precision: str) -> TrainingGraph:
    rules: dict[str, Callable[[TrainingGraph], list[Op]]] = {"niti": niti.rewrite,
                                                              "octo": octo.rewrite,
                                                              "mnn-int8": mnn_int8.rewrite,
                                                              "qat": mnn_int8.rewrite_qat}
    ops = memory.mark_saved(as_training_step(rules[precision](graph)))
    return TrainingGraph(graph.model, graph.batch, precision, ops,
                         rewrite=partial(translate, precision=precision))


def graph_for(model: str, input_chw: tuple[int, ...], num_classes: int, batch: int,
              precision: str = "fp32") -> TrainingGraph:
    """Model zoo + training graph + precision translation in one memoised call."""
    return translate(training_graph(build_model(model, input_chw, num_classes), batch), precision)

"""What a named model is: a :class:`ModelDef` (its builder over :class:`NetBuilder`, its
canonical input and what input it takes), the object that the zoo's models and plugins register
under the entry-point group ``socsim.models`` (docs/plugins.md, "Model plugins")."""
from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Literal

from socsim.workload.builder import NetBuilder
from socsim.workload.model import Model, ModelError


@dataclass(frozen=True)
class ModelDef:
    """A named model: ``build(b)`` adds its layers to ``b`` and returns ``b.build(...)``.

    ``takes``: ``image`` models take ``(C, H, W)``; ``tokens`` models ``(seq_len,)`` or
    ``(seq_len, hidden)`` and get token ids ``(seq_len,)`` as their input tensor.
    ``canonical_input``: the input the model is usually trained on (``socsim list models``).
    """

    build: Callable[[NetBuilder], Model]
    canonical_input: tuple[int, ...] | None = None
    takes: Literal["image", "tokens"] = "image"
    description: str = ""

    def check_input(self, name: str, input_chw: tuple[int, ...]) -> None:
        """A ModelError (field ``input``) when ``input_chw`` is not what the model takes."""
        tokens = self.takes == "tokens"
        want = "(seq_len,) or (seq_len, hidden)" if tokens else "(C, H, W)"
        if not (len(input_chw) in (1, 2) if tokens else len(input_chw) == 3):
            raise ModelError("input", input_chw, f"{name} takes an input shaped {want}")
        if any(d <= 0 for d in input_chw):
            raise ModelError("input", input_chw, "every input dimension must be a positive integer")


def instantiate(defn: ModelDef, name: str, input_chw: tuple[int, ...], num_classes: int) -> Model:
    """``defn`` built for one sample of ``input_chw`` and ``num_classes`` outputs (memoised: equal
    arguments return the same object).  ModelError on a malformed input or class count."""
    try:
        dims = tuple(operator.index(d) for d in input_chw)
    except (TypeError, ValueError):
        raise ModelError("input", input_chw, "input must be a sequence of integers") from None
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise ModelError("num_classes", num_classes, "must be a positive integer")
    return _build(defn, name, dims, num_classes)


@lru_cache(maxsize=256)
def _build(defn: ModelDef, name: str, input_chw: tuple[int, ...], num_classes: int) -> Model:
    defn.check_input(name, input_chw)
    ids = input_chw[:1] if defn.takes == "tokens" else None  # token ids for a sequence model
    return defn.build(NetBuilder(name, input_chw, num_classes, ids))

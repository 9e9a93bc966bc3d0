"""PyTorch import (the ``torch`` extra): an ``nn.Module`` is written to ONNX with torch's ONNX
exporter and imported like any ONNX file (:mod:`socsim.workload.onnx_import`), so a user never
writes a graph by hand.  The module is exported in training mode without constant folding, so
batch norms stay batch norms (an eval-mode export folds them into the convolutions) and
dropouts stay visible (socsim costs them as identities)."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from socsim.workload.model import ModelError


def is_module(obj: object) -> bool:
    """Whether ``obj`` is a ``torch.nn.Module`` (False when torch is not installed)."""
    try:
        import torch
    except ImportError:
        return False
    return isinstance(obj, torch.nn.Module)


def export_module(module: Any, example_input: Any, path: Path) -> tuple[Path, tuple[int, ...]]:
    """Write ``module`` to ``path`` as ONNX for inputs shaped like ``example_input`` (a tensor
    with a batch dimension first, exported as dynamic); returns the path and the per-sample
    input shape.  A ModelError names the module when torch cannot export it."""
    try:
        import torch
    except ImportError:
        raise ModelError("model", type(module).__name__, "a PyTorch model needs torch: "
                         "pip install 'socsim[torch]'") from None
    if not isinstance(example_input, torch.Tensor) or example_input.dim() < 2:
        raise ModelError("example_input", getattr(example_input, "shape", example_input),
                         "give a tensor shaped (batch, *per-sample shape), e.g. torch.randn(1, 3, 32, 32)")
    try:
        with warnings.catch_warnings():   # the tracer's notes are torch's business, not the user's
            warnings.simplefilter("ignore")
            torch.onnx.export(module, (example_input,), str(path), dynamo=False, opset_version=17,
                              input_names=["input"], output_names=["logits"],
                              dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}},
                              training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    except Exception as e:
        raise ModelError("model", type(module).__name__, f"torch.onnx.export failed: "
                         f"{type(e).__name__}: {e}") from None
    return path, tuple(int(d) for d in example_input.shape[1:])

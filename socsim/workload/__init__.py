"""Model zoo and training graphs (docs/architecture.md, ``socsim/workload``).

- :mod:`~socsim.workload.models`: ``build_model(name, input_chw, num_classes) -> Model`` (the
  zoo, model plugins and ONNX files);
- :mod:`~socsim.workload.graph`: ``training_graph(model, batch) -> TrainingGraph``, the
  forward, error-gradient, weight-gradient and update ops of one batch with their work, traffic
  and live memory;
- :mod:`~socsim.workload.precision`: ``translate(graph, "fp32" | "niti" | "octo")``.
"""
from socsim.workload.graph import LayerOps, TrainingGraph, training_graph
from socsim.workload.model import Layer, Model, ModelError
from socsim.workload.ops import Op
from socsim.workload.precision import graph_for, list_precisions, translate
from socsim.workload.models import build_model, canonical_name, list_models
from socsim.workload.zoo import CANONICAL_INPUTS

__all__ = ["CANONICAL_INPUTS", "Layer", "LayerOps", "Model", "ModelError", "Op", "TrainingGraph",
           "build_model", "canonical_name", "graph_for", "list_models", "list_precisions",
           "training_graph", "translate"]

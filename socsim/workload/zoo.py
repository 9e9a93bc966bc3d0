"""The model zoo: canonical names, input checking and memoised construction.

Which published definition a model follows depends on its input (``Model.variant`` says which):

===============  =========================================  ===================================
model            ImageNet-size inputs (short side >= 64)    small inputs (CIFAR 32x32, ...)
===============  =========================================  ===================================
vgg11/16/19      torchvision vggNN (no BN, 3 FC)            kuangliu/pytorch-cifar VGG (BN, 1 FC)
resnet18/34/50   torchvision (v1.5)                         kuangliu/pytorch-cifar (3x3 stem)
densenet121      torchvision                                kuangliu/pytorch-cifar
mobilenetv2      torchvision                                torchvision blocks, CIFAR strides
shufflenetv2     torchvision shufflenet_v2_x1_0             same, stride-1 stem, no max-pool
alexnet          torchvision                                icpm/pytorch-cifar10
inceptionv3      torchvision (short side >= 75)             weiaicunzai/pytorch-cifar100
lenet            LeNet-5 (conv1 pads by 2 below 32 px, so MNIST 28x28 works)
bert-small       L=4, H=512, A=8; input (seq_len,) or (seq_len, hidden); canonical (64, 512)
===============  =========================================  ===================================

Canonical inputs (:data:`CANONICAL_INPUTS`): 3x32x32 for the CNNs Mandheling trains on CIFAR,
3x224x224 for the ImageNet-class ones, 1x28x28 for LeNet, (64, 512) for BERT-small.
"""
from __future__ import annotations

import operator
from functools import lru_cache, partial
from typing import Callable

from socsim.workload.builder import NetBuilder
from socsim.workload.model import Layer, Model, ModelError
from socsim.workload.nets import bert, classic, inception, mobile, resnet

__all__ = ["CANONICAL_INPUTS", "Layer", "Model", "ModelError", "build_model", "canonical_name",
           "list_models"]

_BUILDERS: dict[str, Callable[[NetBuilder], Model]] = {
    "vgg11": partial(classic.vgg, depth_name="vgg11"),
    "vgg16": partial(classic.vgg, depth_name="vgg16"),
    "vgg19": partial(classic.vgg, depth_name="vgg19"),
    "resnet18": partial(resnet.resnet, depth_name="resnet18"),
    "resnet34": partial(resnet.resnet, depth_name="resnet34"),
    "resnet50": partial(resnet.resnet, depth_name="resnet50"),
    "inceptionv3": inception.inceptionv3,
    "mobilenetv2": mobile.mobilenetv2,
    "shufflenetv2": mobile.shufflenetv2,
    "alexnet": classic.alexnet,
    "lenet": classic.lenet,
    "densenet121": resnet.densenet121,
    "bert-small": bert.bert_small,
}

CANONICAL_INPUTS: dict[str, tuple[int, ...]] = {
    "vgg11": (3, 32, 32), "vgg16": (3, 32, 32), "vgg19": (3, 224, 224),
    "resnet18": (3, 224, 224), "resnet34": (3, 32, 32), "resnet50": (3, 224, 224),
    "inceptionv3": (3, 299, 299), "mobilenetv2": (3, 224, 224), "shufflenetv2": (3, 224, 224),
    "alexnet": (3, 224, 224), "lenet": (1, 28, 28), "densenet121": (3, 224, 224),
    "bert-small": (64, 512),
}


def list_models() -> list[str]:
    """Canonical model names."""
    return list(_BUILDERS)


def canonical_name(name: str) -> str:
    """``"VGG-16"``, ``"vgg_16"``, ``"ResNet50"``, ``"BERT_small"`` -> canonical name."""
    key = "".join(ch for ch in str(name).lower() if ch.isalnum())
    for canon in _BUILDERS:
        if key == canon.replace("-", ""):
            return canon
    aliases = {"lenet5": "lenet", "inception3": "inceptionv3", "shufflenetv21x0": "shufflenetv2",
               "mobilenetv21x0": "mobilenetv2", "bertsmall": "bert-small"}
    if key in aliases:
        return aliases[key]
    raise ModelError("model", name, f"unknown model; known models: {', '.join(_BUILDERS)}")


def _check_input(name: str, input_chw: tuple[int, ...]) -> None:
    want = "(seq_len,) or (seq_len, hidden)" if name == "bert-small" else "(C, H, W)"
    ok_len = len(input_chw) in (1, 2) if name == "bert-small" else len(input_chw) == 3
    if not ok_len:
        raise ModelError("input", input_chw, f"{name} takes an input shaped {want}")
    if any(d <= 0 for d in input_chw):
        raise ModelError("input", input_chw, "every input dimension must be a positive integer")


def build_model(name: str, input_chw: tuple[int, ...], num_classes: int) -> Model:
    """Build ``name`` for one sample of shape ``input_chw`` and ``num_classes`` outputs.

    Raises :class:`ModelError` for an unknown model (field ``model``), a malformed or too small
    input (field ``input``, naming the layer whose output would be empty) or a non-positive class
    count (field ``num_classes``).  Memoised: equal arguments return the same object.
    """
    canon = canonical_name(name)
    try:
        dims = tuple(operator.index(d) for d in input_chw)
    except (TypeError, ValueError):
        raise ModelError("input", input_chw, "input must be a sequence of integers") from None
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise ModelError("num_classes", num_classes, "must be a positive integer")
    return _build(canon, dims, num_classes)


@lru_cache(maxsize=256)
def _build(name: str, input_chw: tuple[int, ...], num_classes: int) -> Model:
    _check_input(name, input_chw)
    ids = input_chw[:1] if name == "bert-small" else None  # BERT's input tensor: token ids
    return _BUILDERS[name](NetBuilder(name, input_chw, num_classes, ids))

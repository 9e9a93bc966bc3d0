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

from functools import partial

from socsim.workload.model import Layer, Model, ModelError
from socsim.workload.modeldef import ModelDef, instantiate
from socsim.workload.nets import bert, classic, inception, mobile, resnet

__all__ = ["CANONICAL_INPUTS", "Layer", "Model", "ModelError", "ZOO", "build_model",
           "canonical_name", "list_models"]

CANONICAL_INPUTS: dict[str, tuple[int, ...]] = {
    "vgg11": (3, 32, 32), "vgg16": (3, 32, 32), "vgg19": (3, 224, 224),
    "resnet18": (3, 224, 224), "resnet34": (3, 32, 32), "resnet50": (3, 224, 224),
    "inceptionv3": (3, 299, 299), "mobilenetv2": (3, 224, 224), "shufflenetv2": (3, 224, 224),
    "alexnet": (3, 224, 224), "lenet": (1, 28, 28), "densenet121": (3, 224, 224),
    "bert-small": (64, 512),
}

# The zoo's models, each registered under the entry-point group socsim.models in pyproject.toml
# (``vgg11 = "socsim.workload.zoo:vgg11"``), the path a plugin's models take too.
vgg11 = ModelDef(partial(classic.vgg, depth_name="vgg11"), CANONICAL_INPUTS["vgg11"])
vgg16 = ModelDef(partial(classic.vgg, depth_name="vgg16"), CANONICAL_INPUTS["vgg16"])
vgg19 = ModelDef(partial(classic.vgg, depth_name="vgg19"), CANONICAL_INPUTS["vgg19"])
resnet18 = ModelDef(partial(resnet.resnet, depth_name="resnet18"), CANONICAL_INPUTS["resnet18"])
resnet34 = ModelDef(partial(resnet.resnet, depth_name="resnet34"), CANONICAL_INPUTS["resnet34"])
resnet50 = ModelDef(partial(resnet.resnet, depth_name="resnet50"), CANONICAL_INPUTS["resnet50"])
inceptionv3 = ModelDef(inception.inceptionv3, CANONICAL_INPUTS["inceptionv3"])
mobilenetv2 = ModelDef(mobile.mobilenetv2, CANONICAL_INPUTS["mobilenetv2"])
shufflenetv2 = ModelDef(mobile.shufflenetv2, CANONICAL_INPUTS["shufflenetv2"])
alexnet = ModelDef(classic.alexnet, CANONICAL_INPUTS["alexnet"])
lenet = ModelDef(classic.lenet, CANONICAL_INPUTS["lenet"])
densenet121 = ModelDef(resnet.densenet121, CANONICAL_INPUTS["densenet121"])
bert_small = ModelDef(bert.bert_small, CANONICAL_INPUTS["bert-small"], takes="tokens")

#: the zoo: canonical name -> its definition, in listing order
ZOO: dict[str, ModelDef] = {
    "vgg11": vgg11, "vgg16": vgg16, "vgg19": vgg19, "resnet18": resnet18, "resnet34": resnet34,
    "resnet50": resnet50, "inceptionv3": inceptionv3, "mobilenetv2": mobilenetv2,
    "shufflenetv2": shufflenetv2, "alexnet": alexnet, "lenet": lenet, "densenet121": densenet121,
    "bert-small": bert_small,
}
#: other spellings of zoo names (after lower-casing and dropping non-alphanumerics)
ALIASES: dict[str, str] = {"lenet5": "lenet", "inception3": "inceptionv3",
                           "shufflenetv21x0": "shufflenetv2", "mobilenetv21x0": "mobilenetv2",
                           "bertsmall": "bert-small"}


def list_models() -> list[str]:
    """Canonical names of the zoo's models."""
    return list(ZOO)


def normalise(name: object) -> str:
    """A model name as compared: lower case, alphanumerics only."""
    return "".join(ch for ch in str(name).lower() if ch.isalnum())


def canonical_name(name: str) -> str:
    """``"VGG-16"``, ``"vgg_16"``, ``"ResNet50"``, ``"BERT_small"`` -> canonical zoo name."""
    key = normalise(name)
    for canon in ZOO:
        if key == normalise(canon):
            return canon
    if key in ALIASES:
        return ALIASES[key]
    raise ModelError("model", name, f"unknown model; known models: {', '.join(ZOO)}")


def build_model(name: str, input_chw: tuple[int, ...], num_classes: int) -> Model:
    """Build zoo model ``name`` for one sample of shape ``input_chw`` and ``num_classes`` outputs.

    Raises :class:`ModelError` for an unknown model (field ``model``), a malformed or too small
    input (field ``input``, naming the layer whose output would be empty) or a non-positive class
    count (field ``num_classes``).  Memoised: equal arguments return the same object.
    """
    canon = canonical_name(name)
    return instantiate(ZOO[canon], canon, input_chw, num_classes)

"""ResNet-18/34/50 and DenseNet-121.

Sources: torchvision.models ``resnet.py`` (ResNet v1.5: the stride sits in the bottleneck's 3x3
conv; 1.82 / 3.67 / 4.11 G MACs at 224x224) and ``densenet.py`` (2.87 G MACs).  Small inputs use
kuangliu/pytorch-cifar (``models/resnet.py``, ``models/densenet.py``): a 3x3 stride-1 stem and no
stem max-pool, which is what Mandheling's ResNet-34 on CIFAR-10 (36 convs) counts.
"""
from __future__ import annotations

from socsim.workload.builder import NetBuilder
from socsim.workload.model import Model
from socsim.workload.nets.classic import SMALL_INPUT_BELOW

RESNET_BLOCKS: dict[str, tuple[str, tuple[int, ...]]] = {
    "resnet18": ("basic", (2, 2, 2, 2)),
    "resnet34": ("basic", (3, 4, 6, 3)),
    "resnet50": ("bottleneck", (3, 4, 6, 3)),
}


def _stem(b: NetBuilder, cout: int) -> tuple[str, bool]:
    """ImageNet stem (7x7/2 conv, 3x3/2 max-pool) or the CIFAR stem (3x3/1 conv)."""
    _, h, w = b.input_shape
    if min(h, w) < SMALL_INPUT_BELOW:
        return b.conv_bn_relu("input", cout, 3, 1, 1, name="stem"), True
    x = b.conv_bn_relu("input", cout, 7, 2, 3, name="stem")
    return b.maxpool(x, 3, 2, 1, name="stem.maxpool"), False


def _basic(b: NetBuilder, x: str, planes: int, stride: int) -> str:
    cin = b.shape(x)[0]
    y = b.conv_bn_relu(x, planes, 3, stride, 1, name="conv1")
    y = b.conv_bn_relu(y, planes, 3, 1, 1, name="conv2", act=False)
    if stride != 1 or cin != planes:
        x = b.conv_bn_relu(x, planes, 1, stride, 0, name="downsample", act=False)
    return b.relu(b.add(y, x), name="relu")


def _bottleneck(b: NetBuilder, x: str, planes: int, stride: int) -> str:
    cin = b.shape(x)[0]
    y = b.conv_bn_relu(x, planes, 1, 1, 0, name="conv1")
    y = b.conv_bn_relu(y, planes, 3, stride, 1, name="conv2")
    y = b.conv_bn_relu(y, planes * 4, 1, 1, 0, name="conv3", act=False)
    if stride != 1 or cin != planes * 4:
        x = b.conv_bn_relu(x, planes * 4, 1, stride, 0, name="downsample", act=False)
    return b.relu(b.add(y, x), name="relu")


def resnet(b: NetBuilder, depth_name: str) -> Model:
    kind, blocks = RESNET_BLOCKS[depth_name]
    block = _basic if kind == "basic" else _bottleneck
    x, small = _stem(b, 64)
    for stage, (planes, n) in enumerate(zip((64, 128, 256, 512), blocks), 1):
        for i in range(n):
            with b.scope(f"layer{stage}.{i}"):
                x = block(b, x, planes, 2 if (i == 0 and stage > 1) else 1)
    x = b.flatten(b.global_avgpool(x))
    return b.build(b.linear(x, b.num_classes, name="fc"), "cifar" if small else "torchvision")


def densenet121(b: NetBuilder) -> Model:
    """DenseNet-BC-121: growth 32, bottleneck width 4x growth, compression 0.5, blocks
    (6, 12, 24, 16).  Each dense layer concatenates all earlier feature maps of its block, as
    torchvision's ``_DenseLayer`` does (the source of DenseNet's memory appetite)."""
    growth, bn_size = 32, 4
    _, h, w = b.input_shape
    small = min(h, w) < SMALL_INPUT_BELOW
    if small:
        x = b.conv("input", 2 * growth, 3, 1, 1, name="conv0")
    else:
        x = b.conv_bn_relu("input", 2 * growth, 7, 2, 3, name="stem")
        x = b.maxpool(x, 3, 2, 1, name="pool0")
    for bi, n in enumerate((6, 12, 24, 16), 1):
        features = [x]
        for li in range(1, n + 1):
            with b.scope(f"denseblock{bi}.layer{li}"):
                y = features[0] if len(features) == 1 else b.concat(features)
                y = b.relu(b.bn(y, name="norm1"), name="relu1")
                y = b.conv(y, bn_size * growth, 1, name="conv1")
                y = b.relu(b.bn(y, name="norm2"), name="relu2")
                features.append(b.conv(y, growth, 3, 1, 1, name="conv2"))
        x = b.concat(features, name=f"denseblock{bi}.concat")
        if bi < 4:
            with b.scope(f"transition{bi}"):
                y = b.relu(b.bn(x, name="norm"))
                y = b.conv(y, b.shape(x)[0] // 2, 1, name="conv")
                x = b.avgpool(y, 2, 2, name="pool")
    x = b.relu(b.bn(x, name="norm5"), name="relu5")
    x = b.flatten(b.global_avgpool(x))
    return b.build(b.linear(x, b.num_classes, name="classifier"),
                   "cifar" if small else "torchvision")

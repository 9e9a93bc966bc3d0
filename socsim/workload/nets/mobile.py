"""MobileNet-v2 and ShuffleNet-v2 (1.0x), the depthwise-convolution networks of Swan and Sage.

Sources: torchvision.models ``mobilenetv2.py`` (0.30 G MACs at 224x224) and
``shufflenetv2.py`` (``shufflenet_v2_x1_0``, 0.15 G MACs).  Small inputs keep torchvision's
blocks with kuangliu/pytorch-cifar's CIFAR strides: a stride-1 stem, no stem max-pool, and (for
MobileNet-v2) stride 1 in the 24-channel stage, so 32x32 inputs end on a 4x4 map, not 1x1.
"""
from __future__ import annotations

from socsim.workload.builder import NetBuilder
from socsim.workload.model import Model
from socsim.workload.nets.classic import SMALL_INPUT_BELOW

# (expansion t, output channels c, repeats n, first stride s): MobileNet-v2 paper, Table 2.
MBV2_CFG = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
            (6, 160, 3, 2), (6, 320, 1, 1))


def _inverted_residual(b: NetBuilder, x: str, cout: int, stride: int, t: int) -> str:
    cin = b.shape(x)[0]
    hidden = cin * t
    y = x
    if t != 1:
        y = b.conv_bn_relu(y, hidden, 1, name="expand", cap=6)
    y = b.conv_bn_relu(y, hidden, 3, stride, 1, groups=hidden, name="dw", cap=6)
    y = b.conv_bn_relu(y, cout, 1, name="project", act=False)
    return b.add(y, x) if stride == 1 and cin == cout else y


def mobilenetv2(b: NetBuilder) -> Model:
    _, h, w = b.input_shape
    small = min(h, w) < SMALL_INPUT_BELOW
    x = b.conv_bn_relu("input", 32, 3, 1 if small else 2, 1, name="features.0", cap=6)
    idx = 1
    for t, c, n, s in MBV2_CFG:
        if small and c == 24:
            s = 1
        for i in range(n):
            with b.scope(f"features.{idx}"):
                x = _inverted_residual(b, x, c, s if i == 0 else 1, t)
            idx += 1
    x = b.conv_bn_relu(x, 1280, 1, name=f"features.{idx}", cap=6)
    x = b.flatten(b.global_avgpool(x))
    return b.build(b.linear(x, b.num_classes, name="classifier"),
                   "cifar" if small else "torchvision")


def _shuffle_unit(b: NetBuilder, x: str, cout: int, stride: int) -> str:
    cin = b.shape(x)[0]
    bf = cout // 2
    if stride == 1:
        x1, x2 = b.chunk(x, 0, cin // 2, name="split0"), b.chunk(x, cin // 2, cin, name="split1")
        src = x2
    else:
        with b.scope("branch1"):
            x1 = b.conv_bn_relu(x, cin, 3, stride, 1, groups=cin, name="dw", act=False)
            x1 = b.conv_bn_relu(x1, bf, 1, name="pw")
        src = x
    with b.scope("branch2"):
        y = b.conv_bn_relu(src, bf, 1, name="pw1")
        y = b.conv_bn_relu(y, bf, 3, stride, 1, groups=bf, name="dw", act=False)
        y = b.conv_bn_relu(y, bf, 1, name="pw2")
    return b.channel_shuffle(b.concat([x1, y]), 2)


def shufflenetv2(b: NetBuilder) -> Model:
    _, h, w = b.input_shape
    small = min(h, w) < SMALL_INPUT_BELOW
    x = b.conv_bn_relu("input", 24, 3, 1 if small else 2, 1, name="conv1")
    if not small:
        x = b.maxpool(x, 3, 2, 1, name="maxpool")
    for stage, (cout, n) in enumerate(zip((116, 232, 464), (4, 8, 4)), 2):
        for i in range(n):
            with b.scope(f"stage{stage}.{i}"):
                x = _shuffle_unit(b, x, cout, 2 if i == 0 else 1)
    x = b.conv_bn_relu(x, 1024, 1, name="conv5")
    x = b.flatten(b.global_avgpool(x))
    return b.build(b.linear(x, b.num_classes, name="fc"), "cifar" if small else "torchvision")

"""Inception-v3 (torchvision ``inception_v3``, 5.7 G MACs at 299x299, without the auxiliary
classifier, which only regularises training).

Inputs of at least 75 px (torchvision's documented minimum) get the torchvision network.  Smaller
inputs get the CIFAR variant of github.com/weiaicunzai/pytorch-cifar100 ``models/inceptionv3.py``:
same Inception blocks, a stem of stride-1 padded 3x3 convs without max-pools.
"""
from __future__ import annotations

from socsim.workload.builder import NetBuilder
from socsim.workload.model import Model

SMALL_INPUT_BELOW = 75


def _cbr(b: NetBuilder, x: str, cout: int, k: int | tuple[int, int], stride: int = 1,
         pad: int | tuple[int, int] = 0, name: str = "conv") -> str:
    """torchvision's BasicConv2d: conv (no bias), BN, ReLU."""
    return b.conv_bn_relu(x, cout, k, stride, pad, name=name)


def _block_a(b: NetBuilder, x: str, pool_features: int) -> str:
    b1 = _cbr(b, x, 64, 1, name="branch1x1")
    b5 = _cbr(b, _cbr(b, x, 48, 1, name="branch5x5_1"), 64, 5, pad=2, name="branch5x5_2")
    b3 = _cbr(b, x, 64, 1, name="branch3x3dbl_1")
    b3 = _cbr(b, _cbr(b, b3, 96, 3, pad=1, name="branch3x3dbl_2"), 96, 3, pad=1,
              name="branch3x3dbl_3")
    bp = _cbr(b, b.avgpool(x, 3, 1, 1, name="branch_pool.avgpool"), pool_features, 1,
              name="branch_pool")
    return b.concat([b1, b5, b3, bp])


def _block_b(b: NetBuilder, x: str) -> str:
    b3 = _cbr(b, x, 384, 3, 2, name="branch3x3")
    bd = _cbr(b, x, 64, 1, name="branch3x3dbl_1")
    bd = _cbr(b, _cbr(b, bd, 96, 3, pad=1, name="branch3x3dbl_2"), 96, 3, 2,
              name="branch3x3dbl_3")
    return b.concat([b3, bd, b.maxpool(x, 3, 2, name="branch_pool")])


def _block_c(b: NetBuilder, x: str, c7: int) -> str:
    b1 = _cbr(b, x, 192, 1, name="branch1x1")
    b7 = _cbr(b, x, c7, 1, name="branch7x7_1")
    b7 = _cbr(b, b7, c7, (1, 7), pad=(0, 3), name="branch7x7_2")
    b7 = _cbr(b, b7, 192, (7, 1), pad=(3, 0), name="branch7x7_3")
    bd = _cbr(b, x, c7, 1, name="branch7x7dbl_1")
    for i, (cout, k, p) in enumerate([(c7, (7, 1), (3, 0)), (c7, (1, 7), (0, 3)),
                                      (c7, (7, 1), (3, 0)), (192, (1, 7), (0, 3))], 2):
        bd = _cbr(b, bd, cout, k, pad=p, name=f"branch7x7dbl_{i}")
    bp = _cbr(b, b.avgpool(x, 3, 1, 1, name="branch_pool.avgpool"), 192, 1, name="branch_pool")
    return b.concat([b1, b7, bd, bp])


def _block_d(b: NetBuilder, x: str) -> str:
    b3 = _cbr(b, _cbr(b, x, 192, 1, name="branch3x3_1"), 320, 3, 2, name="branch3x3_2")
    b7 = _cbr(b, x, 192, 1, name="branch7x7x3_1")
    b7 = _cbr(b, b7, 192, (1, 7), pad=(0, 3), name="branch7x7x3_2")
    b7 = _cbr(b, b7, 192, (7, 1), pad=(3, 0), name="branch7x7x3_3")
    b7 = _cbr(b, b7, 192, 3, 2, name="branch7x7x3_4")
    return b.concat([b3, b7, b.maxpool(x, 3, 2, name="branch_pool")])


def _block_e(b: NetBuilder, x: str) -> str:
    b1 = _cbr(b, x, 320, 1, name="branch1x1")
    b3 = _cbr(b, x, 384, 1, name="branch3x3_1")
    b3 = b.concat([_cbr(b, b3, 384, (1, 3), pad=(0, 1), name="branch3x3_2a"),
                   _cbr(b, b3, 384, (3, 1), pad=(1, 0), name="branch3x3_2b")], name="cat3x3")
    bd = _cbr(b, x, 448, 1, name="branch3x3dbl_1")
    bd = _cbr(b, bd, 384, 3, pad=1, name="branch3x3dbl_2")
    bd = b.concat([_cbr(b, bd, 384, (1, 3), pad=(0, 1), name="branch3x3dbl_3a"),
                   _cbr(b, bd, 384, (3, 1), pad=(1, 0), name="branch3x3dbl_3b")],
                  name="cat3x3dbl")
    bp = _cbr(b, b.avgpool(x, 3, 1, 1, name="branch_pool.avgpool"), 192, 1, name="branch_pool")
    return b.concat([b1, b3, bd, bp])


def inceptionv3(b: NetBuilder) -> Model:
    _, h, w = b.input_shape
    small = min(h, w) < SMALL_INPUT_BELOW
    if small:
        x = _cbr(b, "input", 32, 3, pad=1, name="Conv2d_1a_3x3")
        x = _cbr(b, x, 32, 3, pad=1, name="Conv2d_2a_3x3")
        x = _cbr(b, x, 64, 3, pad=1, name="Conv2d_2b_3x3")
        x = _cbr(b, x, 80, 1, name="Conv2d_3b_1x1")
        x = _cbr(b, x, 192, 3, name="Conv2d_4a_3x3")
    else:
        x = _cbr(b, "input", 32, 3, 2, name="Conv2d_1a_3x3")
        x = _cbr(b, x, 32, 3, name="Conv2d_2a_3x3")
        x = _cbr(b, x, 64, 3, pad=1, name="Conv2d_2b_3x3")
        x = b.maxpool(x, 3, 2, name="maxpool1")
        x = _cbr(b, x, 80, 1, name="Conv2d_3b_1x1")
        x = _cbr(b, x, 192, 3, name="Conv2d_4a_3x3")
        x = b.maxpool(x, 3, 2, name="maxpool2")
    for name, pf in (("Mixed_5b", 32), ("Mixed_5c", 64), ("Mixed_5d", 64)):
        with b.scope(name):
            x = _block_a(b, x, pf)
    with b.scope("Mixed_6a"):
        x = _block_b(b, x)
    for name, c7 in (("Mixed_6b", 128), ("Mixed_6c", 160), ("Mixed_6d", 160), ("Mixed_6e", 192)):
        with b.scope(name):
            x = _block_c(b, x, c7)
    with b.scope("Mixed_7a"):
        x = _block_d(b, x)
    for name in ("Mixed_7b", "Mixed_7c"):
        with b.scope(name):
            x = _block_e(b, x)
    x = b.flatten(b.global_avgpool(x))
    return b.build(b.linear(x, b.num_classes, name="fc"), "cifar" if small else "torchvision")

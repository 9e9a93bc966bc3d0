"""LeNet-5, AlexNet and VGG.

Sources: LeNet-5 (LeCun et al. 1998) with ReLU and max-pooling as in MNN's and PyTorch's
examples; AlexNet and VGG from torchvision.models (ImageNet-size inputs) and the CIFAR variants
that the on-device training papers use for 32x32 inputs (VGG: github.com/kuangliu/pytorch-cifar
``models/vgg.py``; AlexNet: github.com/icpm/pytorch-cifar10 ``models/AlexNet.py``).
"""
from __future__ import annotations

from socsim.workload.builder import NetBuilder
from socsim.workload.model import Model

# Below this short side the small-image (CIFAR) variant is built (Tiny-ImageNet's 64 and up
# get the ImageNet definition).
SMALL_INPUT_BELOW = 64


def lenet(b: NetBuilder) -> Model:
    """LeNet-5: conv(6,5x5) pool conv(16,5x5) pool fc120 fc84 fc.  On inputs under 32 px (MNIST
    28x28) the first conv pads by 2, so the classifier sees the classic 16x5x5 map."""
    _, h, w = b.input_shape
    x = b.relu(b.conv("input", 6, 5, pad=2 if min(h, w) < 32 else 0, bias=True, name="conv1"),
               name="relu1")
    x = b.maxpool(x, 2, 2, name="pool1")
    x = b.relu(b.conv(x, 16, 5, bias=True, name="conv2"), name="relu2")
    x = b.flatten(b.maxpool(x, 2, 2, name="pool2"))
    x = b.relu(b.linear(x, 120, name="fc1"), name="relu3")
    x = b.relu(b.linear(x, 84, name="fc2"), name="relu4")
    return b.build(b.linear(x, b.num_classes, name="fc3"), "lenet5")


def alexnet(b: NetBuilder) -> Model:
    """torchvision AlexNet (0.71 G MACs at 224x224); CIFAR variant for small inputs."""
    _, h, w = b.input_shape
    small = min(h, w) < SMALL_INPUT_BELOW
    if small:  # icpm/pytorch-cifar10: 3x3 convs, 2x2 pools, 256x2x2 features at 32x32
        spec = [(64, 3, 2, 1, True), (192, 3, 1, 1, True), (384, 3, 1, 1, False),
                (256, 3, 1, 1, False), (256, 3, 1, 1, True)]
        pool_k, pool_s = 2, 2
    else:      # torchvision: 11x11/4, 5x5, 3x3 x3, 3x3/2 max-pools, adaptive pool to 6x6
        spec = [(64, 11, 4, 2, True), (192, 5, 1, 2, True), (384, 3, 1, 1, False),
                (256, 3, 1, 1, False), (256, 3, 1, 1, True)]
        pool_k, pool_s = 3, 2
    x = "input"
    with b.scope("features"):
        for i, (cout, k, s, p, pool) in enumerate(spec, 1):
            x = b.relu(b.conv(x, cout, k, s, p, bias=True, name=f"conv{i}"), name=f"relu{i}")
            if pool:
                x = b.maxpool(x, pool_k, pool_s, name=f"pool{i}")
    if not small:
        x = b.adaptive_avgpool(x, 6, 6)
    x = b.flatten(x)
    with b.scope("classifier"):  # dropout layers are identities in this model (dropout-free)
        x = b.relu(b.linear(x, 4096, name="fc1"), name="relu1")
        x = b.relu(b.linear(x, 4096, name="fc2"), name="relu2")
        x = b.linear(x, b.num_classes, name="fc3")
    return b.build(x, "cifar" if small else "torchvision")


VGG_CFG: dict[str, list[int | str]] = {  # torchvision / kuangliu configurations A, D, E
    "vgg11": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "vgg16": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
              512, 512, 512, "M"],
    "vgg19": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
              512, 512, 512, 512, "M"],
}


def vgg(b: NetBuilder, depth_name: str) -> Model:
    """VGG.  ImageNet-size: torchvision ``vggNN`` (no BN, 3 FC layers of 4096, 15.5 G MACs for
    VGG-16 at 224).  Small inputs: kuangliu's CIFAR VGG (conv-BN-ReLU, one FC 512->classes),
    the network Mandheling trains on CIFAR-10."""
    _, h, w = b.input_shape
    small = min(h, w) < SMALL_INPUT_BELOW
    x, i, stage = "input", 0, 1
    with b.scope("features"):
        for v in VGG_CFG[depth_name]:
            if v == "M":
                x = b.maxpool(x, 2, 2, name=f"pool{stage}")
                stage += 1
                continue
            i += 1
            if small:
                x = b.conv_bn_relu(x, int(v), 3, 1, 1, name=f"conv{i}")
            else:
                x = b.relu(b.conv(x, int(v), 3, 1, 1, bias=True, name=f"conv{i}"),
                           name=f"relu{i}")
    if small:
        return b.build(b.linear(b.flatten(x), b.num_classes, name="classifier"),
                       "cifar")
    x = b.flatten(b.adaptive_avgpool(x, 7, 7))
    with b.scope("classifier"):
        x = b.relu(b.linear(x, 4096, name="fc1"), name="relu1")
        x = b.relu(b.linear(x, 4096, name="fc2"), name="relu2")
        x = b.linear(x, b.num_classes, name="fc3")
    return b.build(x, "torchvision")

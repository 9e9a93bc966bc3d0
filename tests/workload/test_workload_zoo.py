"""Model zoo: names, published MAC and parameter counts, input checking."""
from __future__ import annotations

import pytest

from socsim.workload import CANONICAL_INPUTS, ModelError, build_model, list_models, training_graph

CANONICAL = ["vgg11", "vgg16", "vgg19", "resnet18", "resnet34", "resnet50", "inceptionv3",
             "mobilenetv2", "shufflenetv2", "alexnet", "lenet", "densenet121", "bert-small"]

# Forward multiply-accumulates per 224x224 image (299x299 for Inception-v3), 1000 classes:
# the "GFLOPS" column of torchvision's model documentation (pytorch.org/vision/stable/models),
# which counts multiply-accumulates.  Our layer definitions follow torchvision, so the
# tolerance is tight: 2% (torchvision prints two decimals).
TORCHVISION_GMACS = {
    "alexnet": 0.71, "vgg11": 7.61, "vgg16": 15.47, "vgg19": 19.63, "resnet18": 1.81,
    "resnet34": 3.66, "resnet50": 4.09, "densenet121": 2.83, "inceptionv3": 5.71,
    "mobilenetv2": 0.30, "shufflenetv2": 0.14,
}
# Parameter counts of the same torchvision models (Inception-v3 without its auxiliary head).
TORCHVISION_PARAMS = {
    "alexnet": 61_100_840, "vgg11": 132_863_336, "vgg16": 138_357_544, "vgg19": 143_667_240,
    "resnet18": 11_689_512, "resnet34": 21_797_672,
    "resnet50": 25_557_032, "densenet121": 7_978_856, "inceptionv3": 23_834_568,
    "mobilenetv2": 3_504_872, "shufflenetv2": 2_278_604,
}


def fwd_macs_per_image(name: str, chw: tuple[int, ...], classes: int = 1000) -> float:
    return training_graph(build_model(name, chw, classes), 1).forward_macs


def test_list_models_is_the_canonical_set() -> None:
    assert list_models() == CANONICAL
    assert set(CANONICAL_INPUTS) == set(CANONICAL)


@pytest.mark.parametrize("alias,canon", [
    ("VGG-16", "vgg16"), ("ResNet50", "resnet50"), ("resnet-18", "resnet18"),
    ("MobileNet-v2", "mobilenetv2"), ("ShuffleNetV2", "shufflenetv2"), ("BERT_small", "bert-small"),
    ("DenseNet-121", "densenet121"), ("Inception-v3", "inceptionv3"), ("LeNet-5", "lenet"),
    ("AlexNet", "alexnet")])
def test_name_variants(alias: str, canon: str) -> None:
    assert build_model(alias, CANONICAL_INPUTS[canon], 10).name == canon


def test_unknown_model_lists_known_models() -> None:
    with pytest.raises(ModelError) as err:
        build_model("resnet51", (3, 32, 32), 10)
    assert err.value.field == "model" and err.value.value == "resnet51"
    assert "resnet50" in err.value.message and "bert-small" in err.value.message
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize("name", CANONICAL)
def test_every_model_builds_for_its_canonical_input(name: str) -> None:
    model = build_model(name, CANONICAL_INPUTS[name], 10)
    assert model.layers[0].kind == "input" and model.layers[-1].kind == "softmax_ce"
    assert model.output_shape == (10,)
    assert build_model(name, CANONICAL_INPUTS[name], 10) is model  # memoised


@pytest.mark.parametrize("name,gmacs", sorted(TORCHVISION_GMACS.items()))
def test_forward_macs_match_torchvision(name: str, gmacs: float) -> None:
    size = 299 if name == "inceptionv3" else 224
    got = fwd_macs_per_image(name, (3, size, size)) / 1e9
    assert got == pytest.approx(gmacs, rel=0.02, abs=0.005)


@pytest.mark.parametrize("name,params", sorted(TORCHVISION_PARAMS.items()))
def test_parameter_counts_match_torchvision(name: str, params: int) -> None:
    size = 299 if name == "inceptionv3" else 224
    assert build_model(name, (3, size, size), 1000).param_count == params


# The small-input (CIFAR-10) definitions against the repository they follow, kuangliu/pytorch-cifar
# (models/resnet.py, vgg.py, densenet.py; counts as torchsummary prints them for 10 classes).  Its
# VGGs give every convolution a bias before its batch norm, which the zoo's leave out (a bias
# before BN is redundant): 2-6 k fewer parameters, inside the 2% the issue asks for.
CIFAR_PARAMS = {
    "resnet18": 11_173_962, "resnet34": 21_282_122, "resnet50": 23_520_842, "densenet121": 6_956_298,
    "vgg11": 9_231_114, "vgg16": 14_728_266, "vgg19": 20_040_522,
}


@pytest.mark.parametrize("name,params", sorted(CIFAR_PARAMS.items()))
def test_cifar_parameter_counts_match_their_source(name: str, params: int) -> None:
    assert build_model(name, (3, 32, 32), 10).param_count == pytest.approx(params, rel=0.02)


# The other small-input variants change strides and pools only, which hold no parameters, so each
# has its torchvision body with a 10-class head: torchvision's count less (features x 990 + 990).
# Inception-v3's CIFAR source, weiaicunzai/pytorch-cifar100 ``models/inceptionv3.py``, also gives
# the pool branch of Mixed_5b-d a 3x3 convolution where torchvision (and the zoo) have a 1x1:
# 8 x (192x32 + 256x64 + 288x64) = 327,680 more parameters, 22,133,738 at 10 classes (-1.5%).
SMALL_VARIANT_HEADS = {"inceptionv3": 2048, "mobilenetv2": 1280, "shufflenetv2": 1024}


@pytest.mark.parametrize("name,features", sorted(SMALL_VARIANT_HEADS.items()))
def test_small_input_variants_keep_the_torchvision_body(name: str, features: int) -> None:
    model = build_model(name, (3, 32, 32), 10)
    assert model.variant == "cifar"
    assert model.param_count == TORCHVISION_PARAMS[name] - 990 * features - 990


def test_cifar_inceptionv3_within_2_percent_of_its_source() -> None:
    weiaicunzai_10_classes = 21_806_058 + 8 * (192 * 32 + 256 * 64 + 288 * 64)
    assert weiaicunzai_10_classes == 22_133_738
    got = build_model("inceptionv3", (3, 32, 32), 10).param_count
    assert got == pytest.approx(weiaicunzai_10_classes, rel=0.02)


def test_bert_small_size() -> None:
    # Turc et al. 2019 BERT-small (L=4, H=512): about 29 M parameters with the pooler, which
    # our classifier head omits (512*512 + 512).
    model = build_model("bert-small", (64, 512), 2)
    assert model.param_count + 512 * 512 + 512 == pytest.approx(28.8e6, rel=0.02)
    assert build_model("bert-small", (64,), 2).param_count == model.param_count


def test_mandheling_table6() -> None:
    """Mandheling Table 6 (calibration/published.yaml model_flops): conv counts, and FLOPs per
    sample that are 6x the forward MACs (2 FLOPs per MAC, forward + two backward passes) for
    VGG-11 and the ResNets; 8% tolerance because the paper rounds and counts its own way
    (its VGG-16/19 and Inception-v3 figures do not follow one convention and are not checked)."""
    table = {("vgg11", 32): (914e6, 8), ("resnet34", 32): (7.26e9, 36),
             ("resnet18", 224): (11.66e9, 20)}
    for (name, size), (flops, convs) in table.items():
        model = build_model(name, (3, size, size), 10 if size == 32 else 1000)
        assert model.count("conv2d") == convs
        assert 6 * fwd_macs_per_image(name, (3, size, size), model.num_classes) == \
            pytest.approx(flops, rel=0.08)
    assert build_model("vgg16", (3, 32, 32), 10).count("conv2d") == 13
    assert build_model("vgg19", (3, 224, 224), 1000).count("conv2d") == 16


def test_cifar_variants_are_used_for_small_inputs() -> None:
    assert build_model("resnet18", (3, 32, 32), 10).variant == "cifar"
    assert build_model("resnet18", (3, 224, 224), 10).variant == "torchvision"
    # kuangliu/pytorch-cifar ResNet-18 on CIFAR-10: 0.56 G MACs, 11.17 M parameters
    assert fwd_macs_per_image("resnet18", (3, 32, 32), 10) == pytest.approx(0.556e9, rel=0.01)
    assert build_model("resnet18", (3, 32, 32), 10).param_count == 11_173_962
    # kuangliu VGG-16 on CIFAR-10: 0.31 G MACs
    assert fwd_macs_per_image("vgg16", (3, 32, 32), 10) == pytest.approx(0.313e9, rel=0.01)
    # LeNet-5 on MNIST: the classic 61.7 k parameters
    assert build_model("lenet", (1, 28, 28), 10).param_count == 61_706


@pytest.mark.parametrize("name,chw,layer", [
    ("vgg16", (3, 16, 16), "features.pool5"), ("alexnet", (3, 8, 8), "features.pool5"),
    ("inceptionv3", (3, 8, 8), "Mixed_7a"), ("lenet", (1, 8, 8), "conv2"),
    ("densenet121", (3, 4, 4), "transition3.pool"), ("vgg19", (3, 40, 20), "features.pool5"),
])
def test_too_small_input_names_the_layer(name: str, chw: tuple[int, ...], layer: str) -> None:
    with pytest.raises(ModelError) as err:
        build_model(name, chw, 10)
    assert err.value.field == "input" and err.value.value == chw
    assert layer in err.value.message and "too small" in err.value.message


@pytest.mark.parametrize("name,chw,classes,field", [
    ("resnet18", (32, 32), 10, "input"), ("resnet18", (3, 0, 32), 10, "input"),
    ("resnet18", (3, 32, 32), 0, "num_classes"), ("lenet", (1, 28, 28), -3, "num_classes"),
    ("bert-small", (64, 500), 2, "input"), ("bert-small", (600,), 2, "input"),
    ("bert-small", (3, 32, 32), 2, "input"), ("vgg16", (3, 32.5, 32), 10, "input"),
])
def test_bad_inputs_are_rejected_cleanly(name: str, chw: tuple, classes: int, field: str) -> None:
    with pytest.raises(ModelError) as err:
        build_model(name, chw, classes)
    assert err.value.field == field


def test_grayscale_and_non_square_inputs_build() -> None:
    assert build_model("vgg16", (1, 32, 32), 10).layers[1].a["cin"] == 1
    model = build_model("resnet50", (3, 160, 96), 10)
    assert model.layer("avgpool").a["h"] != model.layer("avgpool").a["w"]

"""Download and upload of the model in a federated round: time and energy per link type.

Model: a transfer of B bits at throughput t Mbps takes B / t us; the radio draws the linear power
model of Huang et al., "A Close Examination of Performance and Power Characteristics of 4G LTE
Networks", MobiSys 2012 (Table 3): P = alpha_u * t_u + alpha_d * t_d + beta (mW, t in Mbps),
fitted on measured phones.  After a transfer LTE stays in its high-power tail (Table 2); the
fleet charges one tail per round, after the upload.  The energy is the radio's, on top of the
training energy the engine simulates.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    """Throughput and the radio's power model of one link type."""

    name: str
    down_mbps: float
    up_mbps: float
    alpha_down_mw_per_mbps: float
    alpha_up_mw_per_mbps: float
    beta_mw: float
    tail_s: float
    tail_mw: float


LINKS: dict[str, Link] = {
    # LTE: median throughput 12.74 Mbps down, 5.64 Mbps up (Huang et al. MobiSys 2012, 4GTest,
    # Sec. 4); power alpha_u 438.39, alpha_d 51.97, beta 1288.04 mW (Table 3); tail 11.576 s at
    # 1060.04 mW (Table 2)
    "lte": Link("lte", 12.74, 5.64, 51.97, 438.39, 1288.04, 11.576, 1060.04),
    # WiFi: power alpha_u 283.17, alpha_d 137.01, beta 132.86 mW (Huang et al. MobiSys 2012,
    # Table 3), no tail modelled (the paper's WiFi tail is a fraction of LTE's, and PSM returns
    # the radio to idle within ~0.2 s); throughput 20 Mbps down, 10 Mbps up: assumption (a home
    # 802.11n link behind a consumer broadband uplink), no measurement behind it
    "wifi": Link("wifi", 20.0, 10.0, 137.01, 283.17, 132.86, 0.0, 0.0),
}


@dataclass(frozen=True)
class Transfer:
    """One client's download and upload of the model in a round."""

    down_s: float
    up_s: float
    down_j: float
    up_j: float   # the upload and, on LTE, the tail after it

    @property
    def energy_j(self) -> float:
        return self.down_j + self.up_j


def transfer(link: Link, model_bytes: int) -> Transfer:
    """Time and radio energy to download and then upload ``model_bytes`` over ``link``."""
    if model_bytes < 0:
        raise ValueError(f"model size must be non-negative, got {model_bytes}")
    mbit = model_bytes * 8 / 1e6
    down_s = mbit / link.down_mbps
    up_s = mbit / link.up_mbps
    down_w = (link.alpha_down_mw_per_mbps * link.down_mbps + link.beta_mw) * 1e-3
    up_w = (link.alpha_up_mw_per_mbps * link.up_mbps + link.beta_mw) * 1e-3
    tail_j = link.tail_s * link.tail_mw * 1e-3
    return Transfer(down_s, up_s, down_w * down_s, up_w * up_s + tail_j)

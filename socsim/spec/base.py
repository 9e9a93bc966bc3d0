"""Shared base for spec models: strict (unknown keys are errors), immutable, sourced."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class StrictModel(BaseModel):
    """A spec block: unknown keys are rejected, values are immutable once loaded."""

    # inf and nan are no quantity a phone or a workload has: rejected in every float field
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Sourced(StrictModel):
    """A spec block whose constants name where they come from.

    ``source`` says where the block's numbers come from (a public document or an entry of
    ``calibration/``); ``sources`` may refine that per field.
    """

    source: str = Field(min_length=3)
    sources: dict[str, str] = Field(default_factory=dict)

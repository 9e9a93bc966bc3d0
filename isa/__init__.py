"""Instruction-set emulators used by socsim's cost models (currently Hexagon HVX, see isa.hvx)."""

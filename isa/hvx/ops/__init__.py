"""Instruction semantics, grouped by HVX family; importing this package fills the table."""
from . import alu, mpy, shift, perm, mem, scalar  # noqa: F401

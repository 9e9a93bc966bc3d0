"""ARM (aarch64) CPU kernels with NEON intrinsics and their costing (isa.arm.armk)."""

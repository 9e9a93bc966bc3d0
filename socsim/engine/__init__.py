"""The discrete-event simulation of training on a SoC (SimPy)."""

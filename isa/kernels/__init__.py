"""INT8 training kernels (NITI / Mandheling) written as HVX programs.

Each kernel module offers a ``build_*`` function returning an :class:`isa.hvx.Program` for one
tile, and a host-side ``*_hvx`` function that lays data out, runs the program over a batch of
tiles and returns the result (plus its timing).  ``reference`` holds plain-numpy twins; the
costing contract used by the socsim engine is in ``costing``.
"""

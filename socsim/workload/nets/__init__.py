"""Layer-level definitions of the zoo's networks, one module per family.

Every definition is a function ``(b: NetBuilder) -> Model`` that reads the input size from the
builder and picks the published variant that fits it (``socsim.workload.zoo`` documents which).
"""

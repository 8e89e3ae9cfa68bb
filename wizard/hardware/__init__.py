"""Hardware: what a GPU (or CPU) offers the rules and the planner (``spec``: Hardware), the
catalog of devices with their sources (``catalog``: lookup, parse_gpu_spec; data in
presets/hardware.yaml) and NVML discovery of the GPUs on this machine (``nvml``)."""

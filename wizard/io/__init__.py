"""Everything that reads or writes a configuration as text.

Import: ``argv`` (a `vllm serve` command; its shell around it in ``shell``), ``yaml_config``
(``vllm serve --config FILE``), both through ``collector`` (options -> ServeConfig as vLLM
resolves them) and ``spec_json`` (JSON option values, repaired). Bounded readers: ``safeio``.
Export: ``forms`` (the one dispatcher) over ``export`` (command, dotted, YAML, Python) and
``scaleout`` (k8s, helm, ray, docker, multi-gpu). Curated deployments: ``presets``."""

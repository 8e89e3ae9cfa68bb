"""Everything that reads or writes a configuration as text.

Import: ``argv`` (a `vllm serve` command; its shell around it in ``shell``), ``yaml_config``
(``vllm serve --config FILE``), both through ``collector`` (options -> ServeConfig as vLLM
resolves them) and ``spec_json`` (JSON option values, repaired). Bounded readers: ``safeio``.
Export: ``forms`` (the one dispatcher) over ``export`` (command, dotted, YAML, Python) and
``scaleout`` (multi-gpu, ray, docker; the dispatcher) with ``k8s`` (k8s, lws, helm), both over
``deploy`` (what every scale-out form shares). Curated deployments: ``presets``."""

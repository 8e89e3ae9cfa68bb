"""Everything that reads or writes a configuration as text: `vllm serve` argv and spec-JSON import
(``importers``), bounded readers (``safeio``), exports (``export``), scale-out manifests
(``scaleout``) and deployment presets (``presets``)."""

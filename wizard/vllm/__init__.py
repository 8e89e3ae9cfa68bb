"""Facts about vLLM releases, generated from each release's own code (``wizard/data/vllm/<X.Y>/``)."""

"""SpecWizard: configure, check, export and launch speculative decoding for vLLM."""

__version__ = "0.1.0"

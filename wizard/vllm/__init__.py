"""Facts about vLLM releases the rules, mechanisms and faces read: method traits
(``methods.py``) and the tables generated from each release's own code (``wizard/data/vllm/<X.Y>/``)."""

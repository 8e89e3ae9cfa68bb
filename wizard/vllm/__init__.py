"""Facts about vLLM releases the rules and faces read (speculative methods and their traits)."""

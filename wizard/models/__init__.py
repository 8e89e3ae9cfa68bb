"""Model inspection: local folders, the Hugging Face Hub, and the offline catalog.

    from wizard.models.resolve import resolve_model      # folder, then catalog id, then the Hub
    from wizard.models.info import ModelInfo, ModelLookupError
    info = resolve_model("meta-llama/Llama-3.1-8B-Instruct", allow_hub=False)
"""

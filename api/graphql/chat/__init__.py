"""Talking to a model: the Turn type, the context plan, contextPreview, sendMessage and the
messageStream subscription."""

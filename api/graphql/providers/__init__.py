"""The configured providers and models, and which models are kept for admins."""

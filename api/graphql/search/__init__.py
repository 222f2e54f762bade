"""Full-text search over what the caller may read."""

"""Three-way merges of checkpoints: previewMerge and mergeCheckpoints."""

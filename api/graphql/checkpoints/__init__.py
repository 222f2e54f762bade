"""Checkpoints: the Checkpoint type, the lineage graph and comparisons; checkpoint,
checkpointByHash, compareCheckpoints; draft and create."""

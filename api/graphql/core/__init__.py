"""What every domain's part of the schema shares: ids, pagination, cost and input bounds,
the executor, typed errors and the enums."""

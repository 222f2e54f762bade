"""Moving a lineage in and out: exportSpace, exportSession, verifyLineage and importSpace."""

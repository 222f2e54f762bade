"""The GraphQL API: the schema, built per domain (one folder each) on what core/ shares."""

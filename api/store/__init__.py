"""The store: the only package that speaks to the database (and imports Tortoise).

One idiom: SQL through Tortoise's connections (``sql``), with every column
list taken from one table spec per entity (``tables``, derived from the
Tortoise models, which with the migrations stay the schema of record) and
every row read by one mapper per entity (``rows``).

Why SQL rather than Tortoise's query builder: the statements that matter most
(a message's first read, a window of turns, a page of lineage, search,
recursive ancestry) cannot be said in the query builder or cost more to build
and to turn into model instances than to run; once those are SQL, the
builder would be a second way of reading the same rows, with a second mapper
for each entity. The same SQL runs on SQLite and PostgreSQL (``?``
placeholders, translated for asyncpg); the few places the two differ ask
``sql.dialect``.
"""

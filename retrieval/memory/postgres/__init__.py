"""The living memory on PostgreSQL with pgvector: many memories in one database (see ``schema``)."""

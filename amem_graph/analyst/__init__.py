"""The Cypher analyst pack: parsing, validating and binding the packaged read-only queries.

Running them is a store capability (``stores.base.CypherReader``), so this package never
imports a concrete store.
"""

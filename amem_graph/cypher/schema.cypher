// amem_graph — Neo4j schema (Neo4j 5.13 or later; Community edition is enough).
//
// This file is executable: Neo4jStore.connect() runs every statement below, each in its own
// auto-commit transaction, then waits for the indexes to come ONLINE. Every statement is
// idempotent (IF NOT EXISTS), so opening a store again is harmless. Statements that use the
// parameter $dims (the vector index) are held back until the embedder is recorded
// (Neo4jStore.ensure_embedder), because only then is the vector dimension known; $dims is a
// real Cypher parameter, checked to be a positive int before it is sent, never spliced in.
//
// Canonical copy: amem_graph/cypher/schema.cypher (shipped in the wheel and read by the store
// through importlib.resources). cypher/schema.cypher at the repository root is a byte-identical
// copy for readers; tests/contract/test_store_neo4j_specific.py fails if they drift
// (fix: cp amem_graph/cypher/schema.cypher cypher/schema.cypher).
//
// Rules the store follows (keep analyst queries in line with them):
// - Labels and relationship types are the ones in amem_graph/core/schema.py; each relationship type
//   joins exactly one pair of labels. Nothing else is ever created, except one bookkeeping
//   node (:AmemMeta {id: 'store'}) holding embedder_name, embedder_dims and schema_version.
// - Every node has a string `id`, unique per label. Every relationship has a string `key`
//   ('' unless the writer gives one); (type, source id, target id, key) is unique.
// - Times are native DateTime values in UTC; lists of strings are LIST<STRING>.
//
// Node labels and their properties
//   (:Memory)         id, content, kind ('episodic'|'semantic'|'procedural'|'insight'), scope,
//                     agent, task, episode, source, tags LIST<STRING>, keywords LIST<STRING>,
//                     context, created_at, valid_from, valid_to (absent = open-ended),
//                     importance FLOAT, successes FLOAT, failures FLOAT,
//                     status ('active'|'quarantined'|'retracted'|'superseded'), content_hash,
//                     version INTEGER, embedding (unit-length float32 vector, the vector index
//                     property), embedding_is_zero (true only for an all-zero embedding),
//                     search_terms (analysed text the full-text index reads)
//   (:Agent)          id, name, ...            an agent that writes and reads memories
//   (:Task)           id, scope, ...           a unit of work
//   (:Episode)        id, agent, task, scope, started_at, ended_at
//   (:Outcome)        id, episode, success BOOLEAN, score FLOAT, detail, at
//   (:Source)         id, uri
//   (:Retraction)     id, ...                  a retraction and its reason
//   (:MemoryVersion)  id, ...                  an earlier version of an evolved memory
//   (:AuditEvent)     id, ...                  an audit record
//
// Relationship types (source label -> target label)
//   (:Memory)-[:ATTRIBUTED_TO]->(:Agent)        who wrote the memory
//   (:Memory)-[:GENERATED_IN]->(:Episode)       the run that wrote it
//   (:Memory)-[:FOR_TASK]->(:Task)
//   (:Memory)-[:DERIVED_FROM]->(:Memory)        built from another memory
//   (:Memory)-[:FROM_SOURCE]->(:Source)
//   (:Episode)-[:PERFORMED_BY]->(:Agent)
//   (:Episode)-[:PART_OF]->(:Task)
//   (:Episode)-[:READ]->(:Memory)               one per recall hit: key, rank, score, query, at
//   (:Episode)-[:RESULTED_IN]->(:Outcome)
//   (:Memory)-[:LINKED]->(:Memory)              evolution links, weight
//   (:Memory)-[:HAS_VERSION]->(:MemoryVersion)
//   (:MemoryVersion)-[:CAUSED_BY]->(:Memory)
//   (:Memory)-[:SUPERSEDES]->(:Memory)
//   (:Memory)-[:CONTRADICTS]->(:Memory)
//   (:Retraction)-[:RETRACTED]->(:Memory)

// -- uniqueness of ids (each also gives the range index every lookup by id uses) ------------
CREATE CONSTRAINT memory_id IF NOT EXISTS FOR (n:Memory) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT agent_id IF NOT EXISTS FOR (n:Agent) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT task_id IF NOT EXISTS FOR (n:Task) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT episode_id IF NOT EXISTS FOR (n:Episode) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT outcome_id IF NOT EXISTS FOR (n:Outcome) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT source_id IF NOT EXISTS FOR (n:Source) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT retraction_id IF NOT EXISTS FOR (n:Retraction) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT memory_version_id IF NOT EXISTS FOR (n:MemoryVersion) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT audit_event_id IF NOT EXISTS FOR (n:AuditEvent) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT amem_meta_id IF NOT EXISTS FOR (n:AmemMeta) REQUIRE n.id IS UNIQUE;

// -- range indexes for the filters every retrieval path applies (MemoryFilter) ---------------
CREATE INDEX memory_scope IF NOT EXISTS FOR (m:Memory) ON (m.scope);
CREATE INDEX memory_status IF NOT EXISTS FOR (m:Memory) ON (m.status);
CREATE INDEX memory_created_at IF NOT EXISTS FOR (m:Memory) ON (m.created_at);
CREATE INDEX memory_valid_from IF NOT EXISTS FOR (m:Memory) ON (m.valid_from);
CREATE INDEX memory_agent IF NOT EXISTS FOR (m:Memory) ON (m.agent);
CREATE INDEX memory_task IF NOT EXISTS FOR (m:Memory) ON (m.task);
// siblings (same task / same episode, nearest in time): walked outwards from a memory's time
CREATE INDEX memory_task_created_at IF NOT EXISTS FOR (m:Memory) ON (m.task, m.created_at);
CREATE INDEX memory_episode_created_at IF NOT EXISTS FOR (m:Memory) ON (m.episode, m.created_at);

// -- full-text (BM25) over what a memory says ------------------------------------------------
// The store writes each memory's analysed terms (author, content, keywords, tags, context run
// through amem_graph.text.analyze: lower case, English stop words out, Porter stems) to
// m.search_terms, and the index splits them on whitespace only. So Lucene scores exactly the
// terms the embedded store's BM25 scores, with the same k1/b and idf, and both stores rank
// alike. Not eventually consistent: a committed memory is searchable at once.
CREATE FULLTEXT INDEX memory_text IF NOT EXISTS
FOR (m:Memory) ON EACH [m.search_terms]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace', `fulltext.eventually_consistent`: false}};

// -- vector index (deferred: needs $dims, run by Neo4jStore.ensure_embedder) -----------------
// Cosine similarity; the index score s is (1 + cos) / 2 and the store reports 2s - 1, the
// plain cosine, as the embedded store does. Neo4jStore.wipe() drops this index (the embedder
// may change after a wipe); everything above is kept.
CREATE VECTOR INDEX memory_embedding IF NOT EXISTS
FOR (m:Memory) ON (m.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: $dims, `vector.similarity_function`: 'cosine'}};

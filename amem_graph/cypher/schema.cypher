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
//                     status ('active'|'quarantined'|'retracted'|'superseded'|'archived'),
//                     content_hash, version INTEGER (of the note), support INTEGER (writes
//                     merged into it), note_keywords LIST<STRING>, note_tags LIST<STRING>,
//                     note_context (the note layer's; the caller's are keywords, tags,
//                     context), note_indexed BOOLEAN (the note feeds search_terms),
//                     embedding (unit-length float32 vector, the vector index
//                     property), embedding_is_zero (true only for an all-zero embedding),
//                     search_terms (analysed text the full-text index reads)
//   (:Agent)          id, name, ...            an agent that writes and reads memories
//   (:Task)           id, scope, ...           a unit of work
//   (:Episode)        id, agent, task, scope, started_at, ended_at
//   (:Outcome)        id, episode, success BOOLEAN, score FLOAT, detail, at,
//                     used LIST<STRING> (absent when the agent did not say)
//   (:Source)         id, uri
//   (:Retraction)     id, ...                  a retraction and its reason
//   (:MemoryVersion)  id ('<memory id>@<version>'), memory, version INTEGER, kind ('evolve'|
//                     'revert'), at, caused_by, reason, undone BOOLEAN, before_keywords,
//                     before_tags, before_context, after_keywords, after_tags, after_context:
//                     one change of a memory's note, the state before and after it
//   (:AuditEvent)     id, ...                  an audit record
//   (:LlmUsage)       id, <operation>__<metric> INTEGER ...   chat-model calls, retries,
//                     fallbacks and tokens of one MemoryGraph
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
//   (:Outcome)-[:CREDITED]->(:Memory)           credit, basis ('used'|'top'|'read')
//   (:Memory)-[:LINKED]->(:Memory)              note links: reason, weight, at, by ('llm'|'offline')
//   (:Memory)-[:HAS_VERSION]->(:MemoryVersion)  a stored state of the memory's note
//   (:MemoryVersion)-[:CAUSED_BY]->(:Memory)    the memory whose arrival evolved the note
//   (:Memory)-[:SUPERSEDES]->(:Memory)          newer replaces older: reason, by, at,
//                                               previous_status
//   (:Memory)-[:CONTRADICTS]->(:Memory)         the adjudicator's verdict: reason, at, by
//   (:Retraction)-[:RETRACTED]->(:Memory)       effect 'retracted'|'quarantined'|'reverted'
//                                               (props: versions)|'unsuperseded'

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
CREATE CONSTRAINT llm_usage_id IF NOT EXISTS FOR (n:LlmUsage) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT llm_usage_id IF NOT EXISTS FOR (n:LlmUsage) REQUIRE n.id IS UNIQUE;
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
// the same within one scope: a hub that many tenants share (a task named alike in each) is
// walked among the recalling tenant's members only, not through every tenant's
CREATE INDEX memory_task_scope_created_at IF NOT EXISTS
FOR (m:Memory) ON (m.task, m.scope, m.created_at);
CREATE INDEX memory_episode_scope_created_at IF NOT EXISTS
FOR (m:Memory) ON (m.episode, m.scope, m.created_at);

// -- full-text (BM25) over what a memory says ------------------------------------------------
// The store writes each memory's analysed terms (author, content, keywords, tags, context run
// through amem_graph.text.analyze: lower case, English stop words out, Porter stems) to
// m.search_terms, and the index splits them on whitespace only. So Lucene scores exactly the
// terms the embedded store's BM25 scores, with the same k1/b and idf, and both stores rank
// alike. Not eventually consistent: a committed memory is searchable at once.
// m.scope is indexed too (a scope name has no spaces: one token), so a query names its scopes
// as a clause that scores 0 (`+scope:("a")^0 +search_terms:(...)`) and Lucene returns only
// memories in scope: a small scope in a big store is not starved by the rest. Queries must
// name the field (search_terms:...). A store whose index lacks m.scope has it rebuilt on
// connect.
CREATE FULLTEXT INDEX memory_text IF NOT EXISTS
FOR (m:Memory) ON EACH [m.search_terms, m.scope]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace', `fulltext.eventually_consistent`: false}};

// -- vector index (deferred: needs $dims, run by Neo4jStore.ensure_embedder) -----------------
// Cosine similarity; the index score s is (1 + cos) / 2 and the store reports 2s - 1, the
// plain cosine, as the embedded store does. Neo4jStore.wipe() drops this index (the embedder
// may change after a wipe); everything above is kept.
CREATE VECTOR INDEX memory_embedding IF NOT EXISTS
FOR (m:Memory) ON (m.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: $dims, `vector.similarity_function`: 'cosine'}};

// The same index on Neo4j 2026.01 and later (one of the two is created, by server version): it
// also holds m.scope, so the Cypher 25 SEARCH clause filters by scope inside the index and a
// small scope of a big store gets its own nearest neighbours. Unquantised, so the candidates
// are the ones the full-precision cosines rank first, as in the embedded store. A store whose
// index was made without m.scope keeps it (rebuilding a big one can take many minutes):
// `DROP INDEX memory_embedding` and reconnect to have it rebuilt with the scope.
CYPHER 25 CREATE VECTOR INDEX memory_embedding IF NOT EXISTS
FOR (m:Memory) ON m.embedding WITH [m.scope]
OPTIONS {indexConfig: {`vector.dimensions`: $dims, `vector.similarity_function`: 'cosine',
                       `vector.quantization.type`: 'NONE'}};

// name: memory_lineage
// question: Where did this memory come from? The memory and every memory it was DERIVED_FROM,
//   transitively, nearest first, with the agent, episode, task and source of each.
// param: $memory_id (string, required) the memory to trace upstream
// param: $scope (string, optional) only memories in this scope (the root too)
// returns: depth, memory_id, status, agent, episode, task, source, derived_from, content
// note: `ANY SHORTEST` needs Neo4j 5.21 or later; depth is the shortest derivation distance.
MATCH (m:Memory {id: $memory_id})
MATCH p = ANY SHORTEST (m)-[:DERIVED_FROM]->*(a:Memory)
WHERE $scope IS NULL OR (m.scope = $scope AND a.scope = $scope)
OPTIONAL MATCH (a)-[:ATTRIBUTED_TO]->(ag:Agent)
OPTIONAL MATCH (a)-[:GENERATED_IN]->(ep:Episode)
OPTIONAL MATCH (a)-[:FOR_TASK]->(t:Task)
OPTIONAL MATCH (a)-[:FROM_SOURCE]->(s:Source)
RETURN
  length(p) AS depth,
  a.id AS memory_id,
  a.status AS status,
  ag.id AS agent,
  ep.id AS episode,
  t.id AS task,
  s.uri AS source,
  COLLECT { MATCH (a)-[:DERIVED_FROM]->(parent:Memory) RETURN parent.id ORDER BY parent.id }
    AS derived_from,
  a.content AS content
ORDER BY depth, memory_id

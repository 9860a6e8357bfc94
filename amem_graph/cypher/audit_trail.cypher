// name: audit_trail
// question: What changed, when and why? Audit events (retract, restore, forget, ...) oldest
//   first, optionally only those concerning one memory or one agent (as author or actor).
// param: $memory_id (string, optional) only events that concern this memory
// param: $agent (string, optional) only events concerning memories this agent wrote, or that
//   it performed
// param: $since (datetime, optional) only events at or after this time
// param: $scope (string, optional) only events concerning this scope's memories, each narrowed
//   to them: another scope's memory ids and authors are left out (a memory's scope is read
//   from the graph, or, once a `forget` erased it, from the event's memory_scopes), as
//   MemoryGraph.audit(scope=...) does
// returns: event_id, at, kind, actor, reason, retraction_id, memory_ids, agent_ids
MATCH (a:AuditEvent)
WHERE $since IS NULL OR a.at >= $since
WITH a, coalesce(a.memory_scopes, []) AS recorded
WITH a, COLLECT {
  UNWIND range(0, size(a.memory_ids) - 1) AS i
  OPTIONAL MATCH (m:Memory {id: a.memory_ids[i]})
  WITH i, a.memory_ids[i] AS id,
    CASE WHEN size(recorded) > 0 THEN recorded[i] ELSE m.scope END AS scope
  WHERE $scope IS NULL OR scope = $scope
  WITH i, id ORDER BY i
  RETURN id
} AS memory_ids
WHERE size(memory_ids) > 0 OR $scope IS NULL
WITH a, memory_ids, COLLECT {
  MATCH (w:Memory) WHERE w.id IN memory_ids
  OPTIONAL MATCH (w)-[:ATTRIBUTED_TO]->(g:Agent)
  UNWIND [g.id, w.agent] AS x
  WITH DISTINCT x WHERE x IS NOT NULL
  RETURN x
} AS authors
WITH a, memory_ids, CASE WHEN size(memory_ids) = size(a.memory_ids) THEN a.agent_ids
  ELSE [x IN a.agent_ids WHERE x IN authors] END AS agent_ids
WHERE ($memory_id IS NULL OR $memory_id IN memory_ids)
  AND ($agent IS NULL OR $agent IN agent_ids OR a.actor = $agent)
RETURN
  a.id AS event_id,
  a.at AS at,
  a.kind AS kind,
  a.actor AS actor,
  a.reason AS reason,
  a.retraction_id AS retraction_id,
  memory_ids,
  agent_ids
ORDER BY at, event_id

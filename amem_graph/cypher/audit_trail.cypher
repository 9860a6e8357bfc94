// name: audit_trail
// question: What changed, when and why? Audit events (retract, restore, forget, ...) oldest
//   first, optionally only those concerning one memory or one agent (as author or actor).
// param: $memory_id (string, optional) only events that concern this memory
// param: $agent (string, optional) only events concerning memories this agent wrote, or that
//   it performed
// param: $since (datetime, optional) only events at or after this time
// returns: event_id, at, kind, actor, reason, retraction_id, memory_ids, agent_ids
MATCH (a:AuditEvent)
WHERE ($memory_id IS NULL OR $memory_id IN a.memory_ids)
  AND ($agent IS NULL OR $agent IN a.agent_ids OR a.actor = $agent)
  AND ($since IS NULL OR a.at >= $since)
RETURN
  a.id AS event_id,
  a.at AS at,
  a.kind AS kind,
  a.actor AS actor,
  a.reason AS reason,
  a.retraction_id AS retraction_id,
  a.memory_ids AS memory_ids,
  a.agent_ids AS agent_ids
ORDER BY at, event_id

// name: memories_by_agent
// question: What has this agent written (since a time)? Its memories of every status, oldest
//   first, with confidence (the Beta posterior mean over outcome credit).
// param: $agent (string, required) the agent id
// param: $since (datetime, optional) only memories created at or after this time
// param: $scope (string, optional) only memories in this scope
// returns: memory_id, created_at, status, kind, scope, episode, confidence, content
MATCH (m:Memory)-[:ATTRIBUTED_TO]->(:Agent {id: $agent})
WHERE ($since IS NULL OR m.created_at >= $since) AND ($scope IS NULL OR m.scope = $scope)
RETURN
  m.id AS memory_id,
  m.created_at AS created_at,
  m.status AS status,
  m.kind AS kind,
  m.scope AS scope,
  m.episode AS episode,
  (1.0 + m.successes) / (2.0 + m.successes + m.failures) AS confidence,
  m.content AS content
ORDER BY created_at, memory_id

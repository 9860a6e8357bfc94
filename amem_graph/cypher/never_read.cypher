// name: never_read
// question: Which active memories has no episode ever read? Candidates for review or
//   clean-up: nothing has relied on them, so no outcome has tested them.
// param: $scope (string, optional) only memories in this scope
// returns: memory_id, agent, scope, created_at, content
MATCH (m:Memory {status: 'active'})
WHERE ($scope IS NULL OR m.scope = $scope) AND NOT EXISTS { (:Episode)-[:READ]->(m) }
RETURN
  m.id AS memory_id,
  m.agent AS agent,
  m.scope AS scope,
  m.created_at AS created_at,
  m.content AS content
ORDER BY created_at, memory_id

// name: open_contradictions
// question: Which contradictions are still open? CONTRADICTS edges whose two memories are
//   both active, so recall can still return either side.
// param: $scope (string, optional) only contradictions between memories of this scope
// returns: memory_id, agent, contradicts_id, contradicts_agent, content, contradicts_content
MATCH (a:Memory)-[:CONTRADICTS]->(b:Memory)
WHERE a.status = 'active' AND b.status = 'active'
  AND ($scope IS NULL OR (a.scope = $scope AND b.scope = $scope))
RETURN
  a.id AS memory_id,
  a.agent AS agent,
  b.id AS contradicts_id,
  b.agent AS contradicts_agent,
  a.content AS content,
  b.content AS contradicts_content
ORDER BY memory_id, contradicts_id

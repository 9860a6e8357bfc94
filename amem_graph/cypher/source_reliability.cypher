// name: source_reliability
// question: Which sources can we rely on? Each source URI with the memories taken from it,
//   how many are now retracted or quarantined, the outcome credit they received, and a
//   reliability score (1 + S) / (2 + S + F), least reliable first.
// param: $scope (string, optional) only memories in this scope
// returns: source, reliability, memories, withdrawn, successes, failures, memory_ids
MATCH (s:Source)<-[:FROM_SOURCE]-(m:Memory)
WHERE $scope IS NULL OR m.scope = $scope
WITH s, m ORDER BY m.id
WITH
  s,
  collect(m.id) AS memory_ids,
  sum(CASE WHEN m.status IN ['retracted', 'quarantined'] THEN 1 ELSE 0 END) AS withdrawn,
  sum(m.successes) AS successes,
  sum(m.failures) AS failures
RETURN
  s.uri AS source,
  (1.0 + successes) / (2.0 + successes + failures) AS reliability,
  size(memory_ids) AS memories,
  withdrawn,
  successes,
  failures,
  memory_ids
ORDER BY reliability, source

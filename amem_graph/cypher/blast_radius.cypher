// name: blast_radius
// question: What would retracting this memory touch? Its blast radius, as `impact` computes
//   it: memories DERIVED_FROM it (transitively), episodes that READ it or any of those, their
//   outcomes (and which failed), and what those episodes wrote at or after their first such
//   read. One row of counts and sorted id lists.
// param: $memory_id (string, required) the root memory
// param: $scope (string, optional) only if the root is in this scope; the walk crosses
//   scopes as `impact` does, the lists keep this scope's memories, episodes and outcomes
// returns: memory_id, memories, derived, derived_ids, written, written_ids, episodes,
//   episode_ids, outcomes, outcome_ids, failed_outcomes, failed_outcome_ids
MATCH (m:Memory {id: $memory_id})
WHERE $scope IS NULL OR m.scope = $scope
WITH m, COLLECT {
  MATCH (m)<-[:DERIVED_FROM]-+(d:Memory)
  RETURN DISTINCT {id: d.id, scope: d.scope} AS x ORDER BY x.id
} AS derived
WITH m, [x IN derived WHERE $scope IS NULL OR x.scope = $scope | x.id] AS derived_ids,
  [m.id] + [x IN derived | x.id] AS tainted
WITH m, derived_ids, tainted, COLLECT {
  MATCH (e:Episode)-[r:READ]->(t:Memory)
  WHERE t.id IN tainted
  WITH e, min(r.at) AS first_read
  RETURN {id: e.id, first_read: first_read, scope: e.scope} AS reader ORDER BY reader.id
} AS readers
WITH m, derived_ids, tainted, readers,
  [x IN readers WHERE $scope IS NULL OR x.scope = $scope | x.id] AS episode_ids
WITH m, derived_ids, episode_ids,
  COLLECT {
    MATCH (e:Episode)-[:RESULTED_IN]->(o:Outcome) WHERE e.id IN episode_ids
    RETURN o.id AS id ORDER BY id
  } AS outcome_ids,
  COLLECT {
    MATCH (e:Episode)-[:RESULTED_IN]->(o:Outcome)
    WHERE e.id IN episode_ids AND o.success = false
    RETURN o.id AS id ORDER BY id
  } AS failed_outcome_ids,
  COLLECT {
    UNWIND readers AS x
    MATCH (w:Memory)-[:GENERATED_IN]->(:Episode {id: x.id})
    WHERE NOT w.id IN tainted AND (x.first_read IS NULL OR w.created_at >= x.first_read)
      AND ($scope IS NULL OR w.scope = $scope)
    RETURN DISTINCT w.id AS id ORDER BY id
  } AS written_ids
RETURN
  m.id AS memory_id,
  size(derived_ids) + size(written_ids) AS memories,
  size(derived_ids) AS derived,
  derived_ids,
  size(written_ids) AS written,
  written_ids,
  size(episode_ids) AS episodes,
  episode_ids,
  size(outcome_ids) AS outcomes,
  outcome_ids,
  size(failed_outcome_ids) AS failed_outcomes,
  failed_outcome_ids

// name: who_read_it
// question: Who read this memory, and what happened next? Each episode that READ it, when it
//   first did and at what best rank, the episode's outcome, and the memories the episode
//   wrote at or after that first read.
// param: $memory_id (string, required) the memory whose readers to list
// param: $scope (string, optional) only if the memory is in this scope, and only its
//   episodes and memories there
// returns: episode, agent, task, first_read, best_rank, reads, outcome, outcome_detail,
//   wrote_after
MATCH (e:Episode)-[r:READ]->(m:Memory {id: $memory_id})
WHERE $scope IS NULL OR (m.scope = $scope AND e.scope = $scope)
WITH m, e, min(r.at) AS first_read, min(r.rank) AS best_rank, count(r) AS reads
OPTIONAL MATCH (e)-[:RESULTED_IN]->(o:Outcome)
RETURN
  e.id AS episode,
  e.agent AS agent,
  e.task AS task,
  first_read,
  best_rank,
  reads,
  CASE o.success WHEN true THEN 'success' WHEN false THEN 'failure' END AS outcome,
  o.detail AS outcome_detail,
  COLLECT {
    MATCH (w:Memory)-[:GENERATED_IN]->(e)
    WHERE w <> m AND (first_read IS NULL OR w.created_at >= first_read)
      AND ($scope IS NULL OR w.scope = $scope)
    RETURN w.id ORDER BY w.created_at, w.id
  } AS wrote_after
ORDER BY first_read, episode

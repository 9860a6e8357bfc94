// name: episodes_using_withdrawn
// question: Which episodes acted on memories that have since been quarantined or retracted?
//   Each episode that READ such a memory, with those memories split by their status now,
//   its first such read, and its outcome: the runs whose results deserve a second look.
// param: $scope (string, optional) only episodes and memories in this scope
// returns: episode, agent, task, first_read, quarantined_ids, retracted_ids, outcome
MATCH (e:Episode)-[r:READ]->(m:Memory)
WHERE m.status IN ['quarantined', 'retracted']
  AND ($scope IS NULL OR (e.scope = $scope AND m.scope = $scope))
WITH e, m, min(r.at) AS read_at
ORDER BY m.id
WITH
  e,
  min(read_at) AS first_read,
  collect(CASE m.status WHEN 'quarantined' THEN m.id END) AS quarantined_ids,
  collect(CASE m.status WHEN 'retracted' THEN m.id END) AS retracted_ids
OPTIONAL MATCH (e)-[:RESULTED_IN]->(o:Outcome)
RETURN
  e.id AS episode,
  e.agent AS agent,
  e.task AS task,
  first_read,
  quarantined_ids,
  retracted_ids,
  CASE o.success WHEN true THEN 'success' WHEN false THEN 'failure' END AS outcome
ORDER BY first_read, episode

// name: agent_trust
// question: Which agents can we trust? Every agent ranked by trust, the Beta posterior mean
//   (1 + S) / (2 + S + F) over the outcome credit S (successes) and F (failures) summed over
//   every memory it wrote, whatever the memory's status; with how many of those memories are
//   now retracted or quarantined.
// param: $scope (string, optional) only what the agents wrote in this scope
// returns: agent, trust, memories, successes, failures, retracted, quarantined
MATCH (a:Agent)
OPTIONAL MATCH (m:Memory)-[:ATTRIBUTED_TO]->(a)
WHERE $scope IS NULL OR m.scope = $scope
WITH
  a,
  count(m) AS memories,
  sum(coalesce(m.successes, 0.0)) AS s,
  sum(coalesce(m.failures, 0.0)) AS f,
  sum(CASE m.status WHEN 'retracted' THEN 1 ELSE 0 END) AS retracted,
  sum(CASE m.status WHEN 'quarantined' THEN 1 ELSE 0 END) AS quarantined
RETURN
  a.id AS agent,
  (1.0 + s) / (2.0 + s + f) AS trust,
  memories,
  s AS successes,
  f AS failures,
  retracted,
  quarantined
ORDER BY trust DESC, agent

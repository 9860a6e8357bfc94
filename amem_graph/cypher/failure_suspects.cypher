// name: failure_suspects
// question: Which memories are most implicated in failed outcomes? Memories a failed outcome
//   CREDITED (the episode used them, or took its top hit as used), ranked by suspicion:
//   1 - the optimistic bound recall ranks on (Beta posterior mean + $z standard deviations),
//   so two failures without a success outrank one, and a failure among many successes
//   barely counts; among equals, the memory whose author is more suspicious (the same bound
//   over everything the author wrote) comes first. The same ranking as
//   MemoryGraph.failure_suspects() and `amem suspects`.
// param: $limit (int, default 20) how many memories to list
// param: $z (float, default 1.0) standard deviations in the bound (RetrievalConfig.confidence_bound)
// param: $scope (string, optional) only memories in this scope; then nothing of another
//   scope counts: the author's figures sum its memories in the scope, and only the scope's
//   failed episodes are listed
// param: $withdrawn (bool, default false) also list quarantined and retracted memories
// returns: memory_id, agent, status, suspicion, author_suspicion, confidence, failure_credit,
//   success_credit, failed_episodes, episode_ids, author_failures, author_successes, content
MATCH (o:Outcome {success: false})-[c:CREDITED]->(m:Memory)
WHERE c.credit > 0
  AND ($scope IS NULL OR m.scope = $scope)
  AND ($withdrawn OR m.status = 'active')
WITH m, o ORDER BY o.episode
WITH m, [x IN collect(DISTINCT o.episode)
  WHERE $scope IS NULL OR EXISTS { MATCH (:Episode {id: x, scope: $scope}) }] AS episode_ids
WITH m, episode_ids, 1.0 + coalesce(m.successes, 0.0) AS a, 1.0 + coalesce(m.failures, 0.0) AS b
WITH m, episode_ids, a / (a + b) AS mean, sqrt(a * b / ((a + b) * (a + b) * (a + b + 1.0))) AS sd
OPTIONAL MATCH (m)-[:ATTRIBUTED_TO]->(author:Agent)
// a second clause, so that w can be m itself (one pattern never walks an edge twice)
OPTIONAL MATCH (author)<-[:ATTRIBUTED_TO]-(w:Memory)
WHERE $scope IS NULL OR w.scope = $scope
WITH m, episode_ids, mean, sd,
  sum(coalesce(w.failures, 0.0)) AS author_failures,
  sum(coalesce(w.successes, 0.0)) AS author_successes
WITH m, episode_ids, mean, sd, author_failures, author_successes,
  1.0 + author_successes AS aa, 1.0 + author_failures AS ab
WITH m, episode_ids, mean, sd, author_failures, author_successes,
  aa / (aa + ab) + $z * sqrt(aa * ab / ((aa + ab) * (aa + ab) * (aa + ab + 1.0))) AS author_bound
RETURN
  m.id AS memory_id,
  m.agent AS agent,
  m.status AS status,
  1.0 - CASE WHEN mean + $z * sd > 1.0 THEN 1.0 ELSE mean + $z * sd END AS suspicion,
  CASE WHEN m.agent IS NULL THEN null
    ELSE 1.0 - CASE WHEN author_bound > 1.0 THEN 1.0 ELSE author_bound END
  END AS author_suspicion,
  mean AS confidence,
  coalesce(m.failures, 0.0) AS failure_credit,
  coalesce(m.successes, 0.0) AS success_credit,
  size(episode_ids) AS failed_episodes,
  episode_ids,
  author_failures,
  author_successes,
  m.content AS content
ORDER BY suspicion DESC, coalesce(author_suspicion, 0.0) DESC, failure_credit DESC, memory_id
LIMIT $limit

// name: failure_suspects
// question: Which memories are most implicated in failed outcomes? Memories READ by episodes
//   whose outcome failed, ranked by how many such episodes read them, then by the
//   rank-weighted failure credit they received.
// param: $limit (int, default 20) how many memories to list
// returns: memory_id, agent, status, failed_episodes, failure_credit, success_credit,
//   confidence, episode_ids, content
MATCH (e:Episode)-[:RESULTED_IN]->(:Outcome {success: false})
MATCH (e)-[:READ]->(m:Memory)
WITH m, e ORDER BY e.id
WITH m, collect(DISTINCT e.id) AS episode_ids
RETURN
  m.id AS memory_id,
  m.agent AS agent,
  m.status AS status,
  size(episode_ids) AS failed_episodes,
  m.failures AS failure_credit,
  m.successes AS success_credit,
  (1.0 + m.successes) / (2.0 + m.successes + m.failures) AS confidence,
  episode_ids,
  m.content AS content
ORDER BY failed_episodes DESC, failure_credit DESC, memory_id
LIMIT $limit

// name: open_contradictions
// question: Which contradictions are still open? CONTRADICTS edges whose two memories are
//   both active, so recall can still return either side.
// returns: memory_id, agent, contradicts_id, contradicts_agent, content, contradicts_content
MATCH (a:Memory)-[:CONTRADICTS]->(b:Memory)
WHERE a.status = 'active' AND b.status = 'active'
RETURN
  a.id AS memory_id,
  a.agent AS agent,
  b.id AS contradicts_id,
  b.agent AS contradicts_agent,
  a.content AS content,
  b.content AS contradicts_content
ORDER BY memory_id, contradicts_id

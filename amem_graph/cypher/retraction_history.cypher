// name: retraction_history
// question: What has been retracted, why, by whom, and was it restored? Every Retraction,
//   oldest first, with its selector and targets and how many memories it retracted and
//   quarantined (counted from its RETRACTED edges' `effect`).
// param: $since (datetime, optional) only retractions made at or after this time
// param: $scope (string, optional) only retractions made in this scope (retract(scope=...))
// returns: retraction_id, at, by, reason, selector, targets, cascade, retracted, quarantined,
//   state, restored_at, restored_by
MATCH (r:Retraction)
WHERE ($since IS NULL OR r.at >= $since) AND ($scope IS NULL OR r.scope = $scope)
OPTIONAL MATCH (r)-[x:RETRACTED]->(:Memory)
WITH
  r,
  sum(CASE x.effect WHEN 'retracted' THEN 1 ELSE 0 END) AS retracted,
  sum(CASE x.effect WHEN 'quarantined' THEN 1 ELSE 0 END) AS quarantined
RETURN
  r.id AS retraction_id,
  r.at AS at,
  r.by AS by,
  r.reason AS reason,
  r.selector AS selector,
  r.targets AS targets,
  r.cascade AS cascade,
  retracted,
  quarantined,
  CASE WHEN r.restored_at IS NULL THEN 'active' ELSE 'restored' END AS state,
  r.restored_at AS restored_at,
  r.restored_by AS restored_by
ORDER BY at, retraction_id

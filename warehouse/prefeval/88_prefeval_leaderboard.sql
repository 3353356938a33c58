-- PrefEval's README leaderboard beside plens's figures: for each model the pipeline maps to a row of
-- the leaderboard (prefeval.published), the published accuracy and plens's on the same protocol
-- (travel_restaurant, explicit preferences, generation task), per baseline and number of filler turns.
-- The published figures are read from the user's checkout at run time (prefeval/published.json).
-- requires-file: prefeval/published.json
-- requires: prefeval_checks
CREATE OR REPLACE TABLE prefeval_published AS
SELECT * FROM read_json(getvariable('workspace') || '/prefeval/published.json',
  columns = {model: 'VARCHAR', published_as: 'VARCHAR', baseline: 'VARCHAR', inter_turns: 'INTEGER', accuracy: 'DOUBLE'});

CREATE OR REPLACE VIEW prefeval_leaderboard AS
WITH o AS (
  SELECT model, judge_model, baseline, inter_turns, count(*) AS n, avg(CASE WHEN follows_preference THEN 1.0 ELSE 0.0 END) AS accuracy
  FROM prefeval_checks WHERE status = 'ok' AND topic = 'travel_restaurant' AND form = 'explicit'
  GROUP BY model, judge_model, baseline, inter_turns
)
SELECT p.model, p.published_as, o.judge_model, p.baseline, p.inter_turns, o.n, o.accuracy, p.accuracy AS published, o.accuracy - p.accuracy AS difference
FROM prefeval_published p LEFT JOIN o USING (model, baseline, inter_turns)
ORDER BY p.published_as, list_position(['zero-shot', 'remind', 'cot', 'selfcritic', 'rag'], p.baseline), p.inter_turns;

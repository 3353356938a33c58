-- Table 13: dialogue statistics per assistant, setting and task kind (finished dialogues only):
-- turns per dialogue = assistant replies (rounds); tokens per turn = mean output tokens of an utterance.
-- requires: dialogues, turns
CREATE OR REPLACE VIEW table13 AS
SELECT d.assistant_model, d.setting, d.kind, count(DISTINCT d.dialogue_id) AS n_dialogues,
  avg(d.rounds) AS turns_per_dialogue,
  (SELECT avg(t.output_tokens) FROM turns t WHERE t.status = 'ok' AND t.assistant_model = d.assistant_model AND t.setting = d.setting AND t.kind = d.kind) AS tokens_per_turn
FROM dialogues d WHERE d.status = 'ok'
GROUP BY ALL ORDER BY d.assistant_model, d.setting, d.kind DESC;

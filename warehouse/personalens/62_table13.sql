-- Table 13: dialogue statistics per assistant, setting and task kind (finished dialogues only):
-- turns per dialogue = assistant replies (rounds); tokens per turn = mean output tokens of an
-- utterance (all utterances, and the assistant's alone). Dialogues of different user models or
-- dialogue prompt versions are kept apart.
-- requires: dialogues, turns
CREATE OR REPLACE VIEW table13 AS
WITH t AS (
  SELECT dialogue_id, sum(output_tokens) AS tokens, count(*) AS utterances,
    sum(output_tokens) FILTER (speaker = 'assistant') AS assistant_tokens, count(*) FILTER (speaker = 'assistant') AS assistant_utterances
  FROM turns GROUP BY dialogue_id
)
SELECT d.assistant_model, d.user_model, d.prompt_version, d.setting, d.kind, count(*) AS n_dialogues,
  avg(d.rounds) AS turns_per_dialogue,
  sum(t.tokens) / sum(t.utterances) AS tokens_per_turn,
  sum(t.assistant_tokens) / sum(t.assistant_utterances) AS assistant_tokens_per_turn
FROM dialogues d JOIN t USING (dialogue_id)
WHERE d.status = 'ok'
GROUP BY ALL ORDER BY d.assistant_model, d.user_model, d.prompt_version, d.setting, d.kind DESC;

-- Table 10: lexical diversity of the benchmark's own dialogues (finished ones), per assistant and task
-- kind (all settings and user agents pooled): Dist-1, Dist-2, Ent-4 and Self-BLEU for both speakers together and
-- each alone by the full protocol (whole corpus, word tokens), and for both speakers by the laps protocol
-- (the paper's: LAPS reference procedure, character-level Self-BLEU; each speaker alone on request). The
-- step computes table lexical_diversity with the macros of 02_lexical.sql; `plens warehouse --lexical`
-- chooses the protocols, `--laps-speakers` the laps speaker groups. The file runs last:
-- its step starts on a second connection as soon as turns and dialogues exist, and every other file
-- runs beside it.
-- requires: turns, dialogues
-- step: lexical_diversity
CREATE OR REPLACE VIEW table10 AS
SELECT assistant_model, kind, speakers, protocol, n_utterances, n_tokens, iterations,
  dist_1, dist_2, ent_4, self_bleu
FROM lexical_diversity
ORDER BY assistant_model, kind DESC, list_position(['both', 'user', 'assistant'], speakers), protocol DESC;

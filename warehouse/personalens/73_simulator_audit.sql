-- Simulator audit: deterministic flags for the known ways a simulated user fails, per finished dialogue,
-- and their counts per assistant, setting and user agent. Tables can leave flagged dialogues out
-- (plens tables --exclude-flagged builds the warehouse views over unflagged dialogues only).
-- The rules (case-insensitive; "user turns" are the simulated user's utterances):
--   role_inversion      a user turn talks like an assistant ("how can I help/assist", "is there anything
--                       else I can", "I'd be happy to help", "as an AI", "let me know if you need anything else"...)
--   terminate_opening   the opening message holds TERMINATE, or is empty (plens' dialogue stage removes the
--                       marker before it stores a message, so a marker-only opening shows as an empty one;
--                       imported dialogues may keep the marker)
--   terminate_never     the dialogue did not end by TERMINATE (end_reason is not 'terminated')
--   terminate_early     TERMINATE came in the user's first reply, right after an assistant turn that asked
--                       a question (ends with '?'): the user left before answering
--   terminate_in_text   TERMINATE left inside a stored utterance (imported dialogues)
--   empty_turn          an utterance that is empty or only whitespace
--   duplicate_turn      a non-empty utterance repeated verbatim (trimmed, case-folded) by the same speaker
--   non_english         a user turn of 4+ words with more common French / Spanish / German / Italian /
--                       Portuguese function words than English ones (at least 2), or mostly non-Latin letters
--   preference_leak     the opening message contains, verbatim (case-insensitive, on word boundaries), one
--                       of the user's profile preference values of 8+ characters (the protocol has the user
--                       reveal preferences only when asked)
--   round_limit         the dialogue ended at the round limit (end_reason 'round_limit')
-- requires: dialogues, turns, affinities

CREATE OR REPLACE VIEW simulator_audit AS
WITH t AS (
  SELECT dialogue_id, turn, speaker, coalesce(text, '') AS text, lower(trim(coalesce(text, ''))) AS norm FROM turns WHERE status = 'ok'
), words AS (
  SELECT dialogue_id, turn, list_filter(regexp_split_to_array(norm, '[^\p{L}'']+'), w -> w <> '') AS ws,
    length(regexp_replace(text, '[^\p{L}]', '', 'g')) AS letters,
    length(regexp_replace(text, '[^\p{Latin}]', '', 'g')) AS latin
  FROM t WHERE speaker = 'user'
), lang AS (
  SELECT dialogue_id, bool_or(
      (len(ws) >= 4 AND len(list_filter(ws, w -> w IN ('le', 'la', 'les', 'des', 'du', 'et', 'est', 'vous', 'je', 'pour', 'une', 'ce', 'avec', 'pas', 'nous',
          'el', 'los', 'las', 'y', 'por', 'para', 'con', 'es', 'una', 'quiero', 'gracias', 'und', 'der', 'die', 'das', 'ist', 'nicht', 'ich', 'mit', 'bitte',
          'il', 'di', 'che', 'per', 'sono', 'não', 'obrigado', 'uma', 'você'))) >= 2
       AND len(list_filter(ws, w -> w IN ('le', 'la', 'les', 'des', 'du', 'et', 'est', 'vous', 'je', 'pour', 'une', 'ce', 'avec', 'pas', 'nous',
          'el', 'los', 'las', 'y', 'por', 'para', 'con', 'es', 'una', 'quiero', 'gracias', 'und', 'der', 'die', 'das', 'ist', 'nicht', 'ich', 'mit', 'bitte',
          'il', 'di', 'che', 'per', 'sono', 'não', 'obrigado', 'uma', 'você')))
         > len(list_filter(ws, w -> w IN ('the', 'a', 'an', 'and', 'is', 'are', 'to', 'of', 'for', 'in', 'on', 'with', 'i', 'you', 'my', 'me', 'it',
          'this', 'that', 'can', 'please', 'what', 'do', 'would', 'like', 'want', 'need', 'thanks', 'be', 'at', 'some'))))
      OR (letters >= 10 AND latin < 0.5 * letters)) AS non_english
  FROM words GROUP BY dialogue_id
), per AS (
  SELECT dialogue_id,
    bool_or(speaker = 'user' AND regexp_matches(norm, '(how (can|may) i (help|assist)|is there anything else i can|i''d be (happy|glad) to (help|assist)|as an ai\b|let me know if (you need|there''s) anything else|how can i be of (help|assistance))')) AS role_inversion,
    bool_or(turn = 0 AND (norm = '' OR regexp_matches(text, '\bTERMINATE\b'))) AS terminate_opening,
    bool_or(regexp_matches(text, '\bTERMINATE\b')) AS terminate_in_text,
    bool_or(norm = '') AS empty_turn,
    count(*) FILTER (norm <> '') > count(DISTINCT speaker || ':' || norm) FILTER (norm <> '') AS duplicate_turn,
    any_value(norm) FILTER (turn = 1) AS first_answer,
    any_value(norm) FILTER (turn = 0) AS opening
  FROM t GROUP BY dialogue_id
), leak AS (
  SELECT d.dialogue_id, min(a.value) AS leaked_value
  FROM dialogues d JOIN per p USING (dialogue_id) JOIN affinities a ON a.user_id = d.user_id
  WHERE d.status = 'ok' AND a.value IS NOT NULL AND length(a.value) >= 8
    -- contains() first: a pattern built per row is compiled per row, so the regex only checks the word
    -- boundaries of the few openings that contain the value at all.
    AND CASE WHEN contains(p.opening, lower(a.value))
      THEN regexp_matches(p.opening, '(^|[^[:alnum:]])' || regexp_escape(lower(a.value)) || '($|[^[:alnum:]])') ELSE false END
  GROUP BY d.dialogue_id
)
SELECT d.dialogue_id, d.scenario_id, d.user_id, d.kind, d.setting, d.assistant_model, d.user_model, d.replicate, d.end_reason, d.rounds,
  coalesce(p.role_inversion, false) AS role_inversion,
  coalesce(p.terminate_opening, false) AS terminate_opening,
  d.end_reason IS DISTINCT FROM 'terminated' AS terminate_never,
  (d.end_reason = 'terminated' AND d.rounds = 2 AND coalesce(p.first_answer, '') LIKE '%?') AS terminate_early,
  coalesce(p.terminate_in_text, false) AS terminate_in_text,
  coalesce(p.empty_turn, false) AS empty_turn,
  coalesce(p.duplicate_turn, false) AS duplicate_turn,
  coalesce(l.non_english, false) AS non_english,
  k.leaked_value IS NOT NULL AS preference_leak, k.leaked_value,
  d.end_reason = 'round_limit' AS round_limit
FROM dialogues d LEFT JOIN per p USING (dialogue_id) LEFT JOIN lang l USING (dialogue_id) LEFT JOIN leak k USING (dialogue_id)
WHERE d.status = 'ok';

-- Whether a dialogue has any flag (round_limit and terminate_never alone are reported, not excluded:
-- the protocol's round limit is a legitimate ending).
CREATE OR REPLACE VIEW simulator_audit_flagged AS
SELECT dialogue_id FROM simulator_audit
WHERE role_inversion OR terminate_opening OR terminate_early OR terminate_in_text OR empty_turn OR duplicate_turn OR non_english OR preference_leak;

CREATE OR REPLACE VIEW simulator_audit_counts AS
SELECT assistant_model, setting, user_model, count(*) AS n_dialogues,
  count(*) FILTER (role_inversion OR terminate_opening OR terminate_early OR terminate_in_text OR empty_turn OR duplicate_turn OR non_english OR preference_leak) AS n_flagged,
  count(*) FILTER (role_inversion) AS role_inversion,
  count(*) FILTER (terminate_opening) AS terminate_opening,
  count(*) FILTER (terminate_never) AS terminate_never,
  count(*) FILTER (terminate_early) AS terminate_early,
  count(*) FILTER (terminate_in_text) AS terminate_in_text,
  count(*) FILTER (empty_turn) AS empty_turn,
  count(*) FILTER (duplicate_turn) AS duplicate_turn,
  count(*) FILTER (non_english) AS non_english,
  count(*) FILTER (preference_leak) AS preference_leak,
  count(*) FILTER (round_limit) AS round_limit
FROM simulator_audit GROUP BY assistant_model, setting, user_model
ORDER BY assistant_model, list_position(['vanilla', 'base', 'base+d', 'base+i', 'base+s', 'base+all'], setting), setting, user_model;

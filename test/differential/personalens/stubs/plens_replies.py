"""The scripted replies of the PersonaLens differential test, on the original's side.

The same rules are written in TypeScript in ../replies.ts for the plens side: a reply is a
function of the request alone (its system prompt and its one user message), so both sides get
the same reply to the same request, and a request that differs makes every later request of
that dialogue differ too. Nothing here is taken from the original code.

- judge (empty system prompt): one of JUDGE_REPLIES, chosen by the first 8 hex digits of the
  SHA-256 of the prompt, modulo their number; the judge's reply feeds no later request, and the
  gather script's reading of it is compared with plens's.
- user agent (the system prompt holds TERMINATE):
  - the opening (no "[ASSISTANT]:" line in the prompt): a greeting carrying the dialogue's tag,
    "[d-" + the first 10 hex digits of the SHA-256 of the prompt + "]", with spaces around it;
  - later turns follow the plan of the task whose intent the prompt holds (PLENS_DIFF_PLANS):
    "limit" never ends, "terminate" / "terminate-only" / "in-word" end at turn `at` (the number of
    "[ASSISTANT]:" lines) with the marker after text and odd whitespace, alone, or inside a word.
- assistant (anything else): options named by the first 8 hex digits of the SHA-256 of
  system + NUL + prompt, with leading and trailing whitespace.
"""
import hashlib
import json
import os

_plans = None


def _sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plans():
    global _plans
    if _plans is None:
        with open(os.environ["PLENS_DIFF_PLANS"], encoding="utf-8") as f:
            _plans = json.load(f)["plans"]
    return _plans


JUDGE_REPLIES = [
    "EXPLANATION: scripted.\nVERDICT: True\nNaturalness Score: 4\nCoherence Score: 3\nPersonalization Score: 2",
    "EXPLANATION: fine.\nverdict: false\nNaturalness Score: 5\nCoherence Score: 5\nPersonalization Score: 4",
    "**VERDICT:** True\n**Naturalness Score:** 2\n**Coherence Score:** 1\n**Personalization Score:** 3",
    "No verdict here.\nNaturalness Score: 7\nCoherence Score: 0\nPersonalization Score: 9",
    "VERDICT: False, then VERDICT: True.\nnaturalness score: 3\nCoherence Score: 2, later Coherence Score: 4\nPersonalization Score:  3",
    "EXPLANATION: ok\nVERDICT: TRUE\nNaturalness Score: 3\nCoherence Score: 4\nPersonalization Score: 1",
]


def reply(system, prompt):
    if system == "":
        return JUDGE_REPLIES[int(_sha(prompt)[:8], 16) % len(JUDGE_REPLIES)]
    if "TERMINATE" in system:
        turn = prompt.count("[ASSISTANT]:")
        if turn == 0:
            return "  Hi {there}, I need a hand. [d-" + _sha(prompt)[:10] + "]\n"
        plan = next((p for p in plans() if p["intent"] in prompt), {"kind": "terminate", "at": 2})
        if plan["kind"] == "limit" or turn < plan["at"]:
            return "Could you tell me more about choice %d? {ok}" % turn
        if plan["kind"] == "terminate-only":
            return "TERMINATE"
        if plan["kind"] == "in-word":
            return "All set, TERMINATEd. Bye"
        return "\x1c Thanks, that is all I need.\u3000TERMINATE \ufeff"
    return "\n  Here are options %s: {a} and b. " % _sha(system + "\x00" + prompt)[:8]

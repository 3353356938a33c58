"""Runs the ORIGINAL PrefEval classification (multiple-choice) task, unmodified, on the first `limit`
records of a topic, and prints every Bedrock request it makes and what it wrote as one JSON object on
stdout.

Same approach as run_original.py (whose stubs, recorder, checkout lookup and retrieval-file helpers this
reuses): nothing of the original is copied into this repository; classification_task/benchmark_classification.py
(which imports baselines_handling_classification.py from its own folder and utils/*) runs in a scratch
directory laid out so that the original's path logic (load_config takes the parent of the working
directory as the root) reads the checkout and writes into the scratch directory:

    scratch/config.yaml                          copy of the checkout's
    scratch/classification_task/*.py             byte copies of the checkout's scripts (run unmodified)
    scratch/utils -> checkout/utils              symlink
    scratch/benchmark_dataset/filtered_inter_turns.json -> checkout's (symlink)
    scratch/benchmark_dataset/mcq_options/<topic>.json   the first `limit` records (the input selection)
    scratch/benchmark_dataset/implicit_preference/{choice-based,persona-driven}/<topic>.json
                                                 (implicit only) the first `limit` records of both
    scratch/benchmark_dataset/rag_retrieval/...  (task rag only) symlinks to rag_dir's whole retrieval files
                                                 (run_original.rag_paths; the original indexes them by record)
    scratch/benchmark_results/...                what the original writes
The script runs with cwd scratch/classification_task.

Known defect of the release, worked around without editing the script: benchmark_classification.py calls
random.seed(41) but never imports random (a NameError as released). The harness sets builtins.random to
the stdlib random module before importing the script, so the name resolves as the script intends: its
random.seed(41) then seeds the stdlib generator that utils_mcq.shuffle_options (random.sample) draws from.

Input, as JSON on stdin or as the first argument:
    {"checkout": ..., "topic": "travel_restaurant", "inter_turns": 0,
     "task": "zero-shot"|"remind"|"cot"|"selfcritic"|"rag", "model": "claude3hk" (claude*, llama*, mistral*),
     "limit": 3, "pref_form": "explicit"|"implicit" (default explicit),
     "pref_type": "choice"|"persona" (implicit only, default choice), "topk": 5,
     "rag_dir": ... (task rag only: a folder holding rag_retrieval/ in the original layout, or that folder
     itself; make_rag_fixture.py writes one), "replies": {"choice": {"<record index>": "raw reply"}},
     "keep": false}
The script gets --inter_turns, --topic, --task, --model, --pref_form, --topk and, implicit only, --pref_type.
It renames task rag to "rag_" + topk. Calls per record: explicit starts with the preference turn
(max_tokens 5); then one choice call, or for selfcritic three (the first choice, the critique with
max_tokens 300, the revised choice).

Replies (what plens's stub must send back to match). Claude: a call is a choice call when its max_tokens
is 5 and its last message is {"role": "assistant", "content": "<choice>"} (the prefill); its reply is
LETTER + "</choice>" with LETTER = "ABCD"[int(sha256(utf-8 content of the second-to-last message)
.hexdigest()[:8], 16) % 4] (the script prepends "<choice>" before parsing). Mistral / Llama (a prompt
string): a choice call when max_tokens / max_gen_len is 5 and the prompt contains "<choice>"; LETTER is
computed as above from the whole prompt; the reply is LETTER + "</choice>" for Mistral (the script prepends
"<choice>") and "<choice>" + LETTER + "</choice>" for Llama (parsed as is). Every other call (the explicit
preference turn, the self-critic critique) gets run_original.reply_for(last message text, or the prompt)
= "reply " + sha256(text)[:12]. Overrides: replies["choice"][str(record index)] replaces the reply to the
record's final choice call (selfcritic: the revised choice, not the first), verbatim. Choice calls are
assigned to records in order: one per record, two for selfcritic.

Output: {"requests": [{"modelId", "body"}...] in call order, "replies": the reply each request got
(aligned), "results": the results file the original wrote (its JSON list: the records with
shuffled_options, response_to_q, choice, correct_idx, response_to_pref (explicit), self_critic and
first_choice (selfcritic)), "results_file": its path relative to the scratch directory, "accuracy": the
X of the "Overall accuracy: X%" the script printed, "written": the files it wrote (relative to the scratch
directory), "scratch": the scratch directory (removed unless keep)}. The original's own prints go to
stderr. An exception of the original (e.g. its RAG AssertionError when fewer than topk candidates exist)
propagates: a traceback on stderr and exit status 1.
"""

import builtins
import contextlib
import hashlib
import importlib
import json
import os
import random
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import run_original  # noqa: E402
from run_original import PREF_DIRS, PREF_FORMS, reply_for  # noqa: E402

WHO = "run_original_mcq.py"
TASKS = ("zero-shot", "remind", "cot", "selfcritic", "rag")
CHOICE_MAX_TOKENS = 5
PREFILL = "<choice>"


def choice_letter(text):
    return "ABCD"[int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) % 4]


class McqRecorder(run_original.Recorder):
    def __init__(self, checkout, task, choice_replies):
        super().__init__(checkout, {})
        self.per_record = 2 if task == "selfcritic" else 1
        self.choice_calls = 0
        self.choice_replies = choice_replies
        self.sent = []

    def generation_reply(self, body, last):
        text = self.scripted(body, last)
        self.sent.append(text)
        return text

    def scripted(self, body, last):
        messages = body.get("messages")
        if messages is not None:
            is_choice = (
                body.get("max_tokens") == CHOICE_MAX_TOKENS
                and len(messages) >= 2
                and messages[-1] == {"role": "assistant", "content": PREFILL}
            )
            if is_choice:
                key = messages[-2]["content"]
                key = key if isinstance(key, str) else json.dumps(key, ensure_ascii=False)
                default = choice_letter(key) + "</choice>"
        else:
            llama = "max_gen_len" in body
            limit = body.get("max_gen_len") if llama else body.get("max_tokens")
            prompt = body.get("prompt", "")
            is_choice = limit == CHOICE_MAX_TOKENS and PREFILL in prompt
            if is_choice:
                default = (PREFILL if llama else "") + choice_letter(prompt) + "</choice>"
        if not is_choice:
            return reply_for(last)
        n = self.choice_calls
        self.choice_calls += 1
        record, step = divmod(n, self.per_record)
        if step == self.per_record - 1 and str(record) in self.choice_replies:
            return self.choice_replies[str(record)]
        return default


class Tee:
    """stdout of the original: to stderr, and kept (for its "Overall accuracy" line)."""

    def __init__(self):
        self.parts = []

    def write(self, s):
        self.parts.append(s)
        return sys.stderr.write(s)

    def flush(self):
        sys.stderr.flush()

    def text(self):
        return "".join(self.parts)


def build_scratch(checkout, topic, limit, pref_form):
    scratch = tempfile.mkdtemp(prefix="prefeval-original-mcq-")
    cls = os.path.join(scratch, "classification_task")
    os.makedirs(cls)
    for name in sorted(os.listdir(os.path.join(checkout, "classification_task"))):
        if name.endswith(".py"):
            shutil.copyfile(os.path.join(checkout, "classification_task", name), os.path.join(cls, name))
    shutil.copyfile(os.path.join(checkout, "config.yaml"), os.path.join(scratch, "config.yaml"))
    os.symlink(os.path.join(checkout, "utils"), os.path.join(scratch, "utils"))
    data = os.path.join(scratch, "benchmark_dataset")
    os.makedirs(data)
    os.symlink(
        os.path.join(checkout, "benchmark_dataset", "filtered_inter_turns.json"),
        os.path.join(data, "filtered_inter_turns.json"),
    )
    selections = [os.path.join("mcq_options", topic + ".json")]
    if pref_form == "implicit":
        selections += [run_original.dataset_path("implicit", t, topic) for t in PREF_DIRS]
    for rel in selections:
        with open(os.path.join(checkout, "benchmark_dataset", rel), "r") as f:
            records = json.load(f)
        os.makedirs(os.path.dirname(os.path.join(data, rel)), exist_ok=True)
        with open(os.path.join(data, rel), "w") as f:
            json.dump(records[:limit], f, indent=4)
    return scratch, selections


def main():
    spec = run_original.read_input()
    topic = spec.get("topic", "travel_restaurant")
    inter_turns = int(spec.get("inter_turns", 0))
    task = spec.get("task", "zero-shot")
    model = spec.get("model", "claude3hk")
    limit = int(spec.get("limit", 3))
    topk = int(spec.get("topk", 5))
    keep = bool(spec.get("keep", False))
    pref_form = spec.get("pref_form") or "explicit"
    pref_type = spec.get("pref_type") or "choice"
    if pref_form not in PREF_FORMS:
        raise SystemExit("%s: pref_form must be one of %s, not %r" % (WHO, ", ".join(PREF_FORMS), pref_form))
    if pref_type not in PREF_DIRS:
        raise SystemExit("%s: pref_type must be one of %s, not %r" % (WHO, ", ".join(PREF_DIRS), pref_type))
    if task not in TASKS:
        raise SystemExit("%s: task must be one of %s, not %r" % (WHO, ", ".join(TASKS), task))
    if limit < 1 or inter_turns < 0 or topk < 1:
        raise SystemExit("%s: limit and topk must be at least 1 and inter_turns at least 0" % WHO)
    if not re.fullmatch(r"[a-z_]+", topic):
        raise SystemExit("%s: bad topic %r" % (WHO, topic))
    if not any(family in model for family in ("claude", "llama", "mistral")):
        raise SystemExit("%s: only Bedrock models (claude*, llama*, mistral*) can be run, not %r" % (WHO, model))
    replies = spec.get("replies") or {}
    unknown = set(replies) - {"choice"}
    if unknown:
        raise SystemExit("%s: replies may hold only \"choice\", not %s" % (WHO, sorted(unknown)))
    choice_replies = replies.get("choice") or {}
    if not isinstance(choice_replies, dict) or not all(
        isinstance(k, str) and k.isdigit() and isinstance(v, str) for k, v in choice_replies.items()
    ):
        raise SystemExit("%s: replies.choice must map record indexes (\"0\", \"1\", ...) to reply strings" % WHO)

    checkout = run_original.find_checkout(spec.get("checkout"))
    if not os.path.isdir(os.path.join(checkout, "classification_task")):
        raise SystemExit("%s: the checkout %s has no classification_task" % (WHO, checkout))
    needed = [os.path.join("mcq_options", topic + ".json")]
    if pref_form == "implicit":
        needed += [run_original.dataset_path("implicit", t, topic) for t in PREF_DIRS]
    for rel in needed:
        if not os.path.isfile(os.path.join(checkout, "benchmark_dataset", rel)):
            raise SystemExit("%s: the checkout has no benchmark_dataset/%s" % (WHO, rel))
    rag_root = None
    if task == "rag":
        rag_root = run_original.find_rag_root(
            spec.get("rag_dir"), run_original.rag_paths(pref_form, pref_type, topic), WHO
        )

    recorder = McqRecorder(checkout, task, choice_replies)
    run_original.install_stubs(recorder)
    scratch, _ = build_scratch(checkout, topic, limit, pref_form)
    if rag_root:
        run_original.link_rag(scratch, rag_root, run_original.rag_paths(pref_form, pref_type, topic))
    cwd = os.getcwd()
    argv = sys.argv
    had_random = "random" in builtins.__dict__
    try:
        cls_dir = os.path.join(scratch, "classification_task")
        os.chdir(cls_dir)
        sys.path.insert(0, cls_dir)
        sys.argv = [
            "benchmark_classification.py",
            "--inter_turns", str(inter_turns),
            "--topic", topic,
            "--task", task,
            "--model", model,
            "--pref_form", pref_form,
            "--topk", str(topk),
        ]
        if pref_form == "implicit":
            sys.argv += ["--pref_type", pref_type]
        # The release's missing `import random` (see the docstring): resolved through builtins.
        builtins.random = random
        printed = Tee()
        with contextlib.redirect_stdout(printed):
            importlib.import_module("benchmark_classification").main()
        found = re.search(r"Overall accuracy: ([0-9.]+)%", printed.text())
        written = []
        for root, _, files in os.walk(os.path.join(scratch, "benchmark_results")):
            written.extend(os.path.relpath(os.path.join(root, f), scratch) for f in files)
        written.sort()
        if len(written) != 1:
            raise SystemExit("%s: expected the original to write one results file, it wrote %s" % (WHO, written))
        with open(os.path.join(scratch, written[0]), "r") as f:
            results = json.load(f)
        out = {
            "requests": recorder.generation,
            "replies": recorder.sent,
            "results": results,
            "results_file": written[0],
            "accuracy": float(found.group(1)) if found else None,
            "written": written,
            "scratch": scratch,
        }
    finally:
        if not had_random:
            builtins.__dict__.pop("random", None)
        sys.argv = argv
        os.chdir(cwd)
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    sys.stdout.buffer.write(json.dumps(out, ensure_ascii=False).encode("utf-8") + b"\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

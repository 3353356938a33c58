"""Runs the ORIGINAL PrefEval generation task (explicit or implicit preferences), its LLM judge and its
error analysis, unmodified, and prints every model request they make (Bedrock, OpenAI's for a GPT
model, google-genai's for a Gemini model) as one JSON object on stdout.

Nothing of the original is copied into this repository: its scripts, utils, judge templates and data
are read from the checkout (../shared/prefeval-original) at run time. The run happens in a scratch
directory laid out so that the original's own path logic (its load_config takes the parent of the
working directory as the root, its scripts put their own parent on sys.path) reads the checkout and
writes its results into the scratch directory, never into the checkout:

    scratch/config.yaml                      copy of the checkout's
    scratch/generation_task/*.py             byte copies of the checkout's scripts (run unmodified)
    scratch/utils -> checkout/utils          symlink
    scratch/error_type -> checkout/error_type
    scratch/benchmark_dataset/filtered_inter_turns.json -> checkout's (symlink)
    scratch/benchmark_dataset/explicit_preference/<topic>.json                      (explicit), or
    scratch/benchmark_dataset/implicit_preference/choice-based/<topic>.json         (implicit choice), or
    scratch/benchmark_dataset/implicit_preference/persona-driven/<topic>.json       (implicit persona)
                                             the first `limit` records of the topic (the input selection),
                                             at the path the original's loaders and judge read
    scratch/benchmark_dataset/rag_retrieval/... -> rag_dir's  (task rag only) symlinks to the whole
                                             retrieval files (rag_paths below; the original indexes them by
                                             record): explicit simcse_explicit_pref/<topic>_overall300_topk_history.json
                                             and msg_index_<topic>_overall300_topk_history.json; implicit
                                             simcse_implicit_choice/<topic>_overall300_topk_history_mcq.json or
                                             simcse_implicit_persona/<topic>_overall300_topk_history_persona.json,
                                             and simcse_question_inter_conversation_similarities/<topic>_300_inter_similarities.json
    scratch/benchmark_results/...            what the original writes

tiktoken is an empty stand-in; tqdm is the identity; boto3.client gives a recording fake
bedrock-runtime client; openai.OpenAI a recording fake OpenAI client whose chat.completions.create
records its arguments as a generation call ({"modelId": model, "body": every argument}); and
google.genai.Client a recording fake whose models.generate_content records {"model", "contents",
"config": the GenerateContentConfig's settings} (below). bs4 and yaml are the real ones
(python3-bs4, python3-yaml).

Input, as JSON on stdin or as the first argument:
    {"checkout": ..., "topic": "travel_restaurant", "inter_turns": 10,
     "task": "zero-shot"|"remind"|"cot"|"selfcritic"|"rag", "rag_dir": ... (task rag only: a folder holding
     rag_retrieval/ in the original layout, or that rag_retrieval folder itself; make_rag_fixture.py writes one),
     "model": "claude3hk", "limit": 3, "replies": {...}, "keep": false,
     "pref_form": "explicit"|"implicit" (default explicit), "pref_type": "choice"|"persona" (implicit only,
     default choice)}
All three scripts get --pref_form, and for implicit --pref_type (each script's own argparse options).
Explicit: per record two generation calls (the preference turn, then the question). Implicit: one per
record (the record's conversation turns, the filler, the question); its results have no response_to_pref.
selfcritic (--task selfcritic, each script's choice) adds two calls per record after the question: the
critique request, then the revision request; the results then hold zero_shot_response_to_q, self_critic
and, in response_to_q (what the judge judges), the revised answer.
rag: the generation script gets --task rag and renames it "rag_5" (its default --topk 5), so its results
lie under generation_results/rag_5/; the judge and the analysis get --task rag_5 (the only RAG name their
argparse accepts) and so read them there. Its calls are those of zero-shot with the question turn carrying
the top 5 retrieved exchanges. The original asserts it found exactly 5 candidates: explicit needs
inter_turns >= 2 (it ranks only the 2 preference messages and the 2*inter_turns filler messages),
implicit choice inter_turns >= 1 (4 conversation messages); otherwise it raises AssertionError.

Replies. Generation calls get reply_for(last message text) = "reply " + sha256(utf-8 text)[:12], where
the text is the content of the body's last message (Claude, GPT), its last content's first part
(Gemini), or the whole prompt (Llama, Mistral).
Judge calls are told apart by phase (every call of the evaluation script is a judge call); which check a
call is comes from the judge template whose fixed opening (its text before the first placeholder) the
message starts with, and the task index is how many calls of that check came before. Their reply is
replies[check][str(task index)] (or replies[check] when that is a string), else the default: acknow
"<preference>p</preference><answer>Yes</answer>", violate and hallucinate
"<explanation>x</explanation><answer>No</answer>", helpful "<explanation>x</explanation><answer>Yes</answer>"
(a response that follows the preference).

Output: {"generation_requests": [{"modelId", "body"}...], "judge_requests": [...],
"judge_checks": [{"check", "task"}...] (aligned with judge_requests), "results": the evaluation file as
the original wrote it, "stats": analyze_errors's stats, "total": its count, "accuracy": the percentage
its print function printed, "report": what that function printed, "written": the files the original
wrote (relative to the scratch directory), "scratch": the scratch directory (removed unless keep)}.
The original's own prints go to stderr.
"""

import contextlib
import hashlib
import importlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
DEFAULT_CHECKOUTS = [
    os.path.join(os.path.dirname(REPO_ROOT), "shared", "prefeval-original"),
    "/work/shared/prefeval-original",
]
TASKS = ("zero-shot", "remind", "cot", "selfcritic", "rag")
# The generation script renames --task rag to "rag_" + str(--topk) (topk 5 by default) before building
# its result paths; the judge and the analysis only accept that name ("rag_5") for --task.
RAG_TASK_NAME = "rag_5"
PREF_FORMS = ("explicit", "implicit")
# The implicit data set's folder by --pref_type (load_files_implicit, the judge's pref_name).
PREF_DIRS = {"choice": "choice-based", "persona": "persona-driven"}
CHECKS = ("acknow", "violate", "hallucinate", "helpful")
# The judge templates, by the check name the evaluation script gives them.
TEMPLATE_FILES = {
    "acknow": "check_acknowledge.txt",
    "violate": "check_violation.txt",
    "hallucinate": "check_hallucination.txt",
    "helpful": "check_helpful.txt",
}
DEFAULT_JUDGE_REPLIES = {
    "acknow": "<preference>p</preference><answer>Yes</answer>",
    "violate": "<explanation>x</explanation><answer>No</answer>",
    "hallucinate": "<explanation>x</explanation><answer>No</answer>",
    "helpful": "<explanation>x</explanation><answer>Yes</answer>",
}


def reply_for(text):
    """The scripted generation reply: what plens's stub must send back to match."""
    return "reply " + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def die(message):
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    # os._exit, not sys.exit: the original's generate_message catches every exception and retries
    # forever, so a failure inside the fake client must not be raised into it.
    os._exit(3)


class Recorder:
    def __init__(self, checkout, replies):
        self.phase = "generation"
        self.generation = []
        self.judge = []
        self.judge_checks = []
        self.seen = {c: 0 for c in CHECKS}
        self.replies = replies or {}
        self.openings = {}
        for check, name in TEMPLATE_FILES.items():
            with open(os.path.join(checkout, "error_type", name), "r") as f:
                self.openings[check] = f.read().split("{", 1)[0]

    def judge_reply(self, body):
        messages = body.get("messages") or []
        text = messages[-1]["content"] if messages else ""
        check = next((c for c, opening in self.openings.items() if text.startswith(opening)), None)
        if check is None:
            die("run_original.py: a judge request matches none of the judge templates")
        task = self.seen[check]
        self.seen[check] += 1
        self.judge_checks.append({"check": check, "task": task})
        given = self.replies.get(check)
        if isinstance(given, str):
            return given
        if isinstance(given, dict) and str(task) in given:
            return given[str(task)]
        if isinstance(given, list) and task < len(given) and given[task] is not None:
            return given[task]
        return DEFAULT_JUDGE_REPLIES[check]

    def generation_reply(self, body, last):
        """The reply to a generation call (body: the parsed request; last: its last message text or prompt)."""
        return reply_for(last)

    def invoke(self, body, modelId):
        parsed = json.loads(body)
        request = {"modelId": modelId, "body": parsed}
        if "messages" in parsed:
            family = "claude"
            last = parsed["messages"][-1]["content"] if parsed["messages"] else ""
            last = last if isinstance(last, str) else json.dumps(last, ensure_ascii=False)
        else:
            family = "llama" if "max_gen_len" in parsed else "mistral"
            last = parsed.get("prompt", "")
        if self.phase == "judge":
            self.judge.append(request)
            text = self.judge_reply(parsed)
        else:
            self.generation.append(request)
            text = self.generation_reply(parsed, last)
        if family == "claude":
            answer = {"content": [{"type": "text", "text": text}]}
        elif family == "llama":
            answer = {"generation": text}
        else:
            answer = {"outputs": [{"text": text}]}
        return {"body": io.BytesIO(json.dumps(answer).encode("utf-8"))}

    def openai(self, kwargs):
        """A GPT model's call (OpenAI().chat.completions.create): recorded with every argument it was given."""
        body = json.loads(json.dumps(kwargs))
        self.generation.append({"modelId": body.get("model"), "body": body})
        messages = body.get("messages") or []
        last = messages[-1]["content"] if messages else ""
        text = self.generation_reply(body, last if isinstance(last, str) else json.dumps(last, ensure_ascii=False))
        message = types.SimpleNamespace(content=text)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])

    def gemini(self, model, contents, config):
        """A Gemini model's call (genai.Client().models.generate_content): recorded as its model, contents and config."""
        body = json.loads(json.dumps({"model": model, "contents": contents, "config": config}))
        self.generation.append({"modelId": model, "body": body})
        parts = (body["contents"][-1].get("parts") or [{}]) if body["contents"] else [{}]
        text = self.generation_reply(body, parts[0].get("text", ""))
        return types.SimpleNamespace(text=text)


def install_stubs(recorder):
    class FakeBedrockRuntime:
        def invoke_model(self, body=None, modelId=None, **kwargs):
            try:
                return recorder.invoke(body, modelId)
            except SystemExit:
                raise
            except BaseException:
                die("run_original.py: the fake Bedrock client failed:\n" + traceback.format_exc())

    def client(service_name=None, region_name=None, **kwargs):
        if service_name != "bedrock-runtime":
            die("run_original.py: the original asked boto3 for %r" % (service_name,))
        return FakeBedrockRuntime()

    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    class Session:
        def client(self, service_name=None, region_name=None, **kwargs):
            return client(service_name=service_name, region_name=region_name, **kwargs)

    class ClientError(Exception):
        def __init__(self, error_response=None, operation_name=None):
            super().__init__(str(error_response))
            self.response = error_response or {"Error": {"Code": "Unknown", "Message": ""}}

    class FakeGenerateContentConfig:
        """google.genai.types.GenerateContentConfig: keeps the settings it is given."""

        def __init__(self, **kwargs):
            self.settings = kwargs

    class FakeGenai:
        """The google-genai client the original makes for a Gemini model: each generate_content is recorded as a generation call."""

        def __init__(self, *args, **kwargs):
            self.models = types.SimpleNamespace(generate_content=self.generate_content)

        def generate_content(self, model=None, contents=None, config=None):
            try:
                return recorder.gemini(model, contents, config.settings if config is not None else None)
            except SystemExit:
                raise
            except BaseException:
                die("run_original.py: the fake google-genai client failed:\n" + traceback.format_exc())

    class FakeOpenAI:
        """The OpenAI client the original makes for a GPT model: each chat completion is recorded as a generation call."""

        def __init__(self, *args, **kwargs):
            self.chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=self.create))

        def create(self, **kwargs):
            try:
                return recorder.openai(kwargs)
            except SystemExit:
                raise
            except BaseException:
                die("run_original.py: the fake OpenAI client failed:\n" + traceback.format_exc())

    module("boto3", client=client, Session=Session)
    botocore = module("botocore")
    botocore.exceptions = module("botocore.exceptions", ClientError=ClientError)
    module("tqdm", tqdm=lambda iterable=None, *args, **kwargs: iterable)
    module("tiktoken")
    module("openai", OpenAI=FakeOpenAI)
    google = module("google")
    google.__path__ = []
    gtypes = module("google.genai.types", GenerateContentConfig=FakeGenerateContentConfig)
    google.genai = module("google.genai", types=gtypes, Client=FakeGenai)


def find_checkout(given):
    for path in ([given] if given else DEFAULT_CHECKOUTS):
        if path and os.path.isdir(os.path.join(path, "generation_task")):
            return os.path.abspath(path)
    raise SystemExit("run_original.py: no PrefEval checkout at %s" % (given or " or ".join(DEFAULT_CHECKOUTS)))


def dataset_path(pref_form, pref_type, topic):
    """The topic file's path under benchmark_dataset, as the original's loaders build it."""
    if pref_form == "explicit":
        return os.path.join("explicit_preference", topic + ".json")
    return os.path.join("implicit_preference", PREF_DIRS[pref_type], topic + ".json")


def build_scratch(checkout, topic, limit, pref_form, pref_type):
    scratch = tempfile.mkdtemp(prefix="prefeval-original-")
    gen = os.path.join(scratch, "generation_task")
    os.makedirs(gen)
    for name in sorted(os.listdir(os.path.join(checkout, "generation_task"))):
        if name.endswith(".py"):
            shutil.copyfile(os.path.join(checkout, "generation_task", name), os.path.join(gen, name))
    shutil.copyfile(os.path.join(checkout, "config.yaml"), os.path.join(scratch, "config.yaml"))
    os.symlink(os.path.join(checkout, "utils"), os.path.join(scratch, "utils"))
    os.symlink(os.path.join(checkout, "error_type"), os.path.join(scratch, "error_type"))
    data = os.path.join(scratch, "benchmark_dataset")
    selection = dataset_path(pref_form, pref_type, topic)
    os.makedirs(os.path.dirname(os.path.join(data, selection)))
    os.symlink(
        os.path.join(checkout, "benchmark_dataset", "filtered_inter_turns.json"),
        os.path.join(data, "filtered_inter_turns.json"),
    )
    with open(os.path.join(checkout, "benchmark_dataset", selection), "r") as f:
        records = json.load(f)
    with open(os.path.join(data, selection), "w") as f:
        json.dump(records[:limit], f, indent=4)
    return scratch


def rag_paths(pref_form, pref_type, topic):
    """The retrieval files a RAG run reads, relative to benchmark_dataset/rag_retrieval, as the original's
    load_rag_data/load_msg_index (explicit) and load_files_implicit_rag (implicit) build them."""
    if pref_form == "explicit":
        return [
            os.path.join("simcse_explicit_pref", topic + "_overall300_topk_history.json"),
            os.path.join("simcse_explicit_pref", "msg_index_" + topic + "_overall300_topk_history.json"),
        ]
    suffix = "mcq" if pref_type == "choice" else pref_type
    return [
        os.path.join("simcse_implicit_" + pref_type, "%s_overall300_topk_history_%s.json" % (topic, suffix)),
        os.path.join("simcse_question_inter_conversation_similarities", topic + "_300_inter_similarities.json"),
    ]


def find_rag_root(rag_dir, paths, who="run_original.py"):
    """The rag_retrieval folder: rag_dir/rag_retrieval, or rag_dir itself, whichever holds every file of paths."""
    if not rag_dir:
        raise SystemExit("%s: task rag needs rag_dir (a folder holding rag_retrieval/)" % who)
    candidates = [os.path.join(rag_dir, "rag_retrieval"), rag_dir]
    for root in candidates:
        if all(os.path.isfile(os.path.join(root, p)) for p in paths):
            return os.path.abspath(root)
    raise SystemExit(
        "%s: rag_dir %r lacks %s (looked under %s)"
        % (who, rag_dir, ", ".join(paths), " and ".join(candidates))
    )


def link_rag(scratch, rag_root, paths):
    """Symlinks the retrieval files (whole: the original indexes them by record) where the original reads them."""
    for rel in paths:
        target = os.path.join(scratch, "benchmark_dataset", "rag_retrieval", rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(os.path.join(rag_root, rel), target)


def read_input():
    if len(sys.argv) > 1:
        return json.loads(sys.argv[1])
    raw = sys.stdin.read()
    return json.loads(raw) if raw.strip() else {}


def main():
    spec = read_input()
    topic = spec.get("topic", "travel_restaurant")
    inter_turns = int(spec.get("inter_turns", 10))
    task = spec.get("task", "zero-shot")
    model = spec.get("model", "claude3hk")
    limit = int(spec.get("limit", 3))
    keep = bool(spec.get("keep", False))
    pref_form = spec.get("pref_form") or "explicit"
    pref_type = spec.get("pref_type") or "choice"
    if pref_form not in PREF_FORMS:
        raise SystemExit("run_original.py: pref_form must be one of %s, not %r" % (", ".join(PREF_FORMS), pref_form))
    if pref_type not in PREF_DIRS:
        raise SystemExit("run_original.py: pref_type must be one of %s, not %r" % (", ".join(PREF_DIRS), pref_type))
    if task not in TASKS:
        raise SystemExit("run_original.py: task must be one of %s, not %r" % (", ".join(TASKS), task))
    if limit < 1 or inter_turns < 0:
        raise SystemExit("run_original.py: limit must be at least 1 and inter_turns at least 0")
    if not re.fullmatch(r"[a-z_]+", topic):
        raise SystemExit("run_original.py: bad topic %r" % (topic,))
    rag_root = None
    if task == "rag":
        rag_root = find_rag_root(spec.get("rag_dir"), rag_paths(pref_form, pref_type, topic))
    replies = spec.get("replies") or {}
    unknown = set(replies) - set(CHECKS)
    if unknown:
        raise SystemExit("run_original.py: replies has unknown checks %s" % sorted(unknown))
    if not any(family in model for family in ("claude", "llama", "mistral", "gpt", "gemini")):
        raise SystemExit("run_original.py: only Bedrock (claude*, llama*, mistral*), GPT (gpt*) and Gemini (gemini*) models can be run, not %r" % model)

    checkout = find_checkout(spec.get("checkout"))
    if not os.path.isfile(os.path.join(checkout, "benchmark_dataset", dataset_path(pref_form, pref_type, topic))):
        raise SystemExit(
            "run_original.py: the checkout has no %s topic %r"
            % ("explicit-preference" if pref_form == "explicit" else "implicit %s-preference" % pref_type, topic)
        )
    sys.dont_write_bytecode = True
    recorder = Recorder(checkout, replies)
    install_stubs(recorder)
    scratch = build_scratch(checkout, topic, limit, pref_form, pref_type)
    if rag_root:
        link_rag(scratch, rag_root, rag_paths(pref_form, pref_type, topic))
    cwd = os.getcwd()
    argv = sys.argv
    try:
        gen_dir = os.path.join(scratch, "generation_task")
        os.chdir(gen_dir)
        sys.path.insert(0, gen_dir)
        common = ["--model", model, "--topic", topic, "--task", task, "--pref_form", pref_form]
        if pref_form == "implicit":
            common += ["--pref_type", pref_type]
        with contextlib.redirect_stdout(sys.stderr):
            sys.argv = ["benchmark_generation.py", *common, "--inter_turns", str(inter_turns)]
            importlib.import_module("benchmark_generation").main()
            if task == "rag":
                common[common.index("--task") + 1] = RAG_TASK_NAME

            recorder.phase = "judge"
            sys.argv = ["llm_based_evaluation_errortypes.py", *common, "--inter_turn", str(inter_turns)]
            importlib.import_module("llm_based_evaluation_errortypes").main()
            recorder.phase = "done"

            sys.argv = ["get_preference_following_accuracy_generation_task.py", *common, "--inter_turn", str(inter_turns)]
            analysis = importlib.import_module("get_preference_following_accuracy_generation_task")
            args = analysis.parse_arguments()
            _, _, eval_file = analysis.setup_paths(args, analysis.load_config("../config.yaml"))
            data = analysis.load_evaluation_data(eval_file)
            stats, total = analysis.analyze_errors(data)
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                analysis.print_evaluation_results(stats, total, args)
        report = printed.getvalue()
        sys.stderr.write(report)
        found = re.search(r"([0-9.]+)%\s*$", report)
        written = []
        for root, _, files in os.walk(os.path.join(scratch, "benchmark_results")):
            written.extend(os.path.relpath(os.path.join(root, f), scratch) for f in files)
        out = {
            "generation_requests": recorder.generation,
            "judge_requests": recorder.judge,
            "judge_checks": recorder.judge_checks,
            "results": data,
            "stats": stats,
            "total": total,
            "accuracy": float(found.group(1)) if found else None,
            "report": report,
            "written": sorted(written),
            "scratch": scratch,
        }
    finally:
        sys.argv = argv
        os.chdir(cwd)
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    sys.stdout.buffer.write(json.dumps(out, ensure_ascii=False).encode("utf-8") + b"\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

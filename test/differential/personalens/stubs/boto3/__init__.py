"""A stand-in for boto3 in the PersonaLens differential test: Session().client("bedrock-runtime")
gives a client whose invoke_model records each request (normalised to system prompt, messages,
sampling settings and model) as a JSON line in PLENS_DIFF_LOG and answers it with the scripted
reply of plens_replies, in the response shape of the model family the body is for (Claude's
Messages body, Llama's and Mistral's completion prompts)."""
import io
import json
import os

import plens_replies

_LLAMA_SYSTEM = "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
_LLAMA_USER = "<|eot_id|>\n<|start_header_id|>user<|end_header_id|>\n\n"
_LLAMA_END = "<|eot_id|>\n<|start_header_id|>assistant<|end_header_id|>"
_MISTRAL_START = "<s>[INST]"
_MISTRAL_END = "[/INST]"


def _normalise(model_id, body):
    if "messages" in body:  # Anthropic Messages body
        messages = [{"role": m["role"], "content": "".join(c["text"] for c in m["content"])} for m in body["messages"]]
        return {"model": model_id, "system": body.get("system", ""), "messages": messages,
                "temperature": body.get("temperature"), "max_tokens": body.get("max_tokens")}, "claude"
    prompt = body["prompt"]
    if prompt.startswith(_LLAMA_SYSTEM) and prompt.endswith(_LLAMA_END) and _LLAMA_USER in prompt:
        system, user = prompt[len(_LLAMA_SYSTEM):-len(_LLAMA_END)].split(_LLAMA_USER, 1)
        return {"model": model_id, "system": system, "messages": [{"role": "user", "content": user}],
                "temperature": body.get("temperature"), "max_tokens": body.get("max_gen_len"),
                "top_p": body.get("top_p")}, "llama"
    if prompt.startswith(_MISTRAL_START) and prompt.endswith(_MISTRAL_END):
        # Compared as sent: the system prompt and the turn are joined inside one instruction.
        return {"model": model_id, "system": "", "messages": [{"role": "user", "content": prompt}],
                "temperature": body.get("temperature"), "max_tokens": body.get("max_tokens"),
                "top_p": body.get("top_p")}, "mistral"
    raise ValueError("the differential stub reads Claude, Llama and Mistral bodies only: %r" % prompt[:40])


class _Client:
    def invoke_model(self, body, modelId, **kwargs):
        request, family = _normalise(modelId, json.loads(body))
        text = plens_replies.reply(request["system"], request["messages"][-1]["content"])
        with open(os.environ["PLENS_DIFF_LOG"], "a", encoding="utf-8") as f:
            f.write(json.dumps(request, ensure_ascii=False) + "\n")
        if family == "claude":
            answer = {"content": [{"type": "text", "text": text}]}
        elif family == "mistral":
            answer = {"outputs": [{"text": text, "stop_reason": "stop"}]}
        else:
            answer = {"generation": text}
        return {"body": io.BytesIO(json.dumps(answer).encode("utf-8"))}


class Session:
    def client(self, service, region_name=None, **kwargs):
        assert service == "bedrock-runtime", service
        return _Client()

"""A realistic tool-calling model, through litellm's real request path (LiteLLMModel ->
litellm -> HTTP -> the loopback server of llm_support.py), integrating English and Chinese units
with the mistakes real models make, alone and combined.

The model is `Realistic`, a policy written below: it reads the conversation the way a model
does (the unit and the candidates of the first message, each tool result, each repair message)
and answers with tool calls or text. It knows nothing the conversation does not tell it: it
repairs a refused rewrite by putting back the lines the refusal quotes, word for word as quoted,
where the node it saw had them; it fixes a lint problem from the body line the check quotes; it
learns from each mistake (it makes each one once). The
mistakes are the issue's: a whole-file `write` instead of `edit`, bare Sources lists,
`related::` fields, paths without `digest/`, links without `.md`, missing arguments, receipts in
prose or fences, no receipt, a prose-deleting rewrite, a rewrite whose refusal is long, an
`UPDATE` action; plus ignoring the check and sending the receipt anyway, repeating an edit when
told the receipt was wrong, and an English node for a Chinese unit.

Every unit is accepted within its budget and its node keeps every line the node had, or (the
stubborn model, which never repairs) fails with the vault byte-identical. The tokens of every
unit, failed ones included, equal what the server charged.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from conftest import tree_bytes
from integrate_support import TermIndex, context, copy_vault
from llm_support import FakeOpenAI, completion, serving

from remelink.config import load_settings
from remelink.guards import lost_lines, validate
from remelink.integrate import UnitResult, integrate_unit
from remelink.units import Unit
from remelink.vault.notes import parse_text, read_note
from remelink.vault.resolve import VaultFiles

if importlib.util.find_spec("litellm") is None:
    pytest.skip("litellm is not installed (make install-llm)", allow_module_level=True)
pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")]

from remelink.models.litellm_model import LiteLLMModel  # noqa: E402

# -- the vault: the integrate fixture plus nodes with long Sources sentences, and Chinese ones --

LONG_EN = [
    "The mobile client has sent an idempotency key with every charge since version 4.2, and the "
    "note in [[daily/2026-06-10/mobile-client.md]] records that retried charges from the app "
    "stopped producing duplicates once the server replayed the stored first response for each "
    "key.",
    "The design note in [[daily/2026-06-24/idempotency-scope.md]] scopes keys per account, so "
    "the same key sent by two accounts names two different requests, and it rejects a repeat "
    "with the same key but a different request body with a 422 instead of replaying the first "
    "response.",
]
LONG_ZH = [
    "这一偏好最早出现在 [[daily/2026-06-15/评审约定.md]] 记录的评审约定里：团队发现超过一千行的"
    "合并请求往往要拖上好几天才有人看完，评审意见也集中在格式问题上，真正的逻辑错误反而被漏掉，"
    "于是大家约定把改动拆小，每个合并请求只解决一个问题，并在描述里写清楚动机和验证方式。",
    "同一份记录 [[daily/2026-06-15/评审约定.md]] 还写到，拆小之后评审的平均等待时间从三天降到了"
    "半天，新人也更愿意参与评审，因为每次只需要理解一个改动的上下文，而不必在一个巨大的差异里"
    "来回跳转寻找相关的修改，这让团队决定把这条约定长期保留下去。",
]
SMALL_PR = "digest/personal/小型-pr.md"
PII = "digest/wiki/个人信息保护.md"
IDEM = "digest/wiki/idempotency-keys.md"


def prepare(vault: Path) -> None:
    def put(rel: str, text: str) -> None:
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    put("daily/2026-06-10/mobile-client.md",
        "# Mobile client\n\nSince 4.2 the app sends an idempotency key with every charge.\n")
    put("daily/2026-06-15/评审约定.md",
        "# 评审约定\n\n团队约定合并请求要小，每个只解决一个问题。\n")
    put("daily/2026-06-16/隐私.md", "# 隐私\n\n个人信息在任何存储里都要最小化。\n")
    node = vault / IDEM
    node.write_text(node.read_text(encoding="utf-8") + "\n" + "\n\n".join(LONG_EN) + "\n",
                    encoding="utf-8")
    put(SMALL_PR, "---\nname: 小型 PR\ndescription: 团队偏好小而单一目的的合并请求。\n"
                  "kind: preference\n---\n团队偏好小型合并请求：每个只做一件事。\n\n"
                  "Why: 大改动会藏住错误，也会拖慢评审。\n\n"
                  "How to apply: 把工作拆成几个合并请求，每个只有一个目的。\n\n## Sources\n\n"
                  + "\n\n".join(LONG_ZH) + "\n")
    put(PII, "---\nname: 个人信息保护\ndescription: 个人信息在存储和日志里都要最小化。\n"
             "kind: concept\n---\n个人信息保护要求在任何存储里只保留必要的个人信息。\n\n"
             "## Sources\n\n这一原则记录在 [[daily/2026-06-16/隐私.md]]。\n")


# -- the cases: what a sensible model would do with each unit --------------------------------

@dataclass(frozen=True)
class Case:
    unit: Unit
    target: str
    action: str                 # what the right answer is
    zh: bool
    content: str = ""           # CREATE: the body it writes (correct form)
    english: str = ""           # CREATE, zh: the same body in English (a mistake)
    insert_after: str = ""      # update: the line after which it inserts `addition`
    addition: str = ""          # update: the text inserted (may be empty)
    sentence: str = ""          # the Sources sentence for the new note
    related: tuple[str, ...] = ()


EN_CREATE = Case(
    unit=Unit(name="Queue long PDF exports", bucket="procedure",
              summary="PDF exports over the 30 s gateway timeout run as queued jobs with an "
                      "idempotency key; the user gets a download link by email.",
              paths=("daily/2026-06-20/pdf-export-timeout.md",)),
    target="digest/procedure/queue-long-pdf-exports.md", action="CREATE", zh=False,
    content="Use this when an export takes longer than the 30-second gateway timeout.\n\n"
            "1. Validate the request and enqueue an export job with an idempotency key, as "
            "[[digest/wiki/idempotency-keys.md]] describes, so a retry does not start a second "
            "render.\n2. Return 202 with the job id at once.\n3. Let the worker render the PDF "
            "and email a signed link valid for 7 days.\n\nFailure modes: a crashed worker "
            "retries the job up to 3 times before the user is told. Show progress while it "
            "runs, as [[digest/wiki/progress-feedback.md]] recommends.\n\n## Sources\n\n"
            "SOURCES\n",
    sentence="The gateway timeout and the decision to queue long exports are recorded in "
             "[[daily/2026-06-20/pdf-export-timeout.md]].",
    related=("digest/wiki/idempotency-keys.md", "digest/wiki/progress-feedback.md"))
EN_UPDATE = Case(
    unit=Unit(name="Idempotency keys on every charge", bucket="wiki",
              summary="A second duplicate charge shows every money-moving POST needs a key.",
              paths=("daily/2026-06-23/checkout-retries.md",)),
    target=IDEM, action="CORROBORATE", zh=False,
    insert_after=LONG_EN[1],
    sentence="The checkout incident in [[daily/2026-06-23/checkout-retries.md]] confirms that "
             "every money-moving POST needs a key.",
    related=("digest/wiki/progress-feedback.md",))
ZH_CREATE = Case(
    unit=Unit(name="日志数据脱敏", bucket="procedure",
              summary="写入日志的手机号和身份证号必须先在日志中间件里脱敏，只保留后四位。",
              paths=("daily/2026-06-21/数据脱敏.md",)),
    target="digest/procedure/日志数据脱敏.md", action="CREATE", zh=True,
    content="在任何会把手机号或身份证号写入日志的服务上线前使用；它落实了 "
            "[[digest/wiki/个人信息保护.md]] 的要求。\n\n"
            "1. 在日志中间件里注册脱敏过滤器，不要在各个业务模块里各自处理。\n"
            "2. 用正则匹配手机号和身份证号，替换为星号，只保留后四位。\n"
            "3. 上线前用样例日志验证脱敏结果。\n\n## Sources\n\nSOURCES\n",
    english="Use this before any service that writes phone or ID numbers to its logs goes "
            "live; it applies [[digest/wiki/个人信息保护.md]].\n\n1. Register the masking "
            "filter in the logging middleware, not in each module.\n2. Match phone and ID "
            "numbers with a regular expression and keep only the last four digits.\n3. Check "
            "the result on sample logs before release.\n\n## Sources\n\nSOURCES\n",
    sentence="脱敏规则和操作步骤记录在 [[daily/2026-06-21/数据脱敏.md]]。",
    related=(PII,))
ZH_UPDATE = Case(
    unit=Unit(name="PR 不超过 400 行", bucket="personal",
              summary="代码评审时每个 PR 不超过 400 行，方便评审。",
              paths=("daily/2026-06-22/周会.md",)),
    target=SMALL_PR, action="REFINE", zh=True,
    insert_after="How to apply: 把工作拆成几个合并请求，每个只有一个目的。",
    addition="每个合并请求不超过 400 行，方便评审。",
    sentence="周会记录 [[daily/2026-06-22/周会.md]] 定下了每个合并请求不超过 400 行的上限。")
CASES = {"en-create": EN_CREATE, "en-update": EN_UPDATE, "zh-create": ZH_CREATE,
         "zh-update": ZH_UPDATE}

_PROBLEM_RE = re.compile(r'^- body line (\d+): ([a-z-]+): (.*): ("(?:[^"\\]|\\.)*")$', re.M)
_LOST_RE = re.compile(r'^- body line (\d+) would be lost: ("(?:[^"\\]|\\.)*")$', re.M)
_BODY_RE = re.compile(r"^\d+\. (\S+)\n(?:   [^\n]*\n)*?   body:\n(~{4,})markdown\n(.*?)\n\2$",
                      re.M | re.S)


# -- the model ----------------------------------------------------------------------------------

@dataclass
class Realistic:
    """One unit's model. `mistakes` it makes once each; `stubborn` never repairs anything."""

    case: Case
    mistakes: frozenset[str] = frozenset()
    stubborn: bool = False
    made: set[str] = field(default_factory=set)
    seen: list[str] = field(default_factory=list)   # every tool result and repair it read
    turns: int = 0
    last_write: dict[str, Any] | None = None
    last_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    edits: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def once(self, mistake: str) -> bool:
        if mistake in self.mistakes and mistake not in self.made:
            self.made.add(mistake)
            return True
        return False

    # The server calls this with each request body.
    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        self.turns += 1
        messages = body["messages"]
        tail = []
        for message in reversed(messages):
            if message["role"] in ("tool", "user"):
                tail.append(str(message.get("content") or ""))
                if message["role"] == "user":
                    break
            else:
                break
        tail.reverse()
        self.seen += tail
        last = tail[-1] if tail else ""
        if len(messages) == 2:
            return self.start(messages[1]["content"])
        if messages[-1]["role"] == "user":
            return self.on_feedback(last)
        return self.on_tool_results(tail, messages)

    def calls(self, *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
        self.last_calls = list(calls)
        if any(name == "edit" for name, _ in calls):
            self.edits = [c for c in calls if c[0] == "edit"]  # for repeat_edit_on_feedback
        return completion(tool_calls=[(f"call_{self.turns}_{i}", name, args)
                                      for i, (name, args) in enumerate(calls)])

    # -- turn one: the unit and its candidates ---------------------------------------------
    def start(self, first: str) -> dict[str, Any]:
        case = self.case
        if self.once("missing_args"):
            return self.calls(("node_search", {"limit": 20}))  # the query is missing
        shown = {m.group(1): m.group(3) + "\n" for m in _BODY_RE.finditer(first)}
        if case.action != "CREATE" and case.target not in shown:
            return self.calls(("read", {"path": case.target}))
        return self.act(shown.get(case.target))

    def node_body(self, messages: list[dict[str, Any]]) -> str:
        """The target's body as the conversation showed it: the candidate block of the first
        message, or a read of it."""
        target = self.case.target
        for m in _BODY_RE.finditer(str(messages[1]["content"])):
            if m.group(1) == target:
                return m.group(3) + "\n"
        for message in messages:
            content = str(message.get("content") or "")
            if message["role"] == "tool" and content.startswith("---\nname:"):
                return parse_text(target, content.split("\n[lines ")[0]).body
        raise AssertionError("the model never saw the node it updates")

    # -- acting ------------------------------------------------------------------------------
    def act(self, body: str | None) -> dict[str, Any]:
        case = self.case
        if case.action == "CREATE":
            return self.write_new()
        assert body is not None
        return self.update(body)

    def write_new(self, *, english: bool = False) -> dict[str, Any]:
        case = self.case
        content = case.english if english else case.content
        sources = case.sentence
        if self.once("bare_sources"):
            sources = f"- [[{case.unit.paths[0]}]]"
        content = content.replace("SOURCES", sources)
        if case.related and self.once("relation_field"):
            content = content.replace("\n## Sources", f"related:: [[{case.related[-1]}]]\n\n"
                                                      "## Sources")
        if case.related and self.once("link_no_md"):
            content = content.replace(f"[[{case.related[0]}]]",
                                      f"[[{case.related[0].removesuffix('.md')}]]")
        path = case.target
        if self.once("no_digest_prefix"):
            path = path.removeprefix("digest/")
            content = content.replace("[[digest/", "[[")
        if case.zh and not english and self.once("english_for_chinese"):
            return self.write_new(english=True)
        args = {"path": path, "name": case.unit.name,
                "description": case.unit.summary[:120], "content": content,
                "metadata": {"kind": "procedure"}}
        if self.once("missing_args"):
            args.pop("description")
        self.last_write = args
        return self.calls(("write", args))

    def update(self, body: str) -> dict[str, Any]:
        case = self.case
        lines = body.rstrip("\n").split("\n")
        anchor = case.insert_after
        assert anchor in lines, (anchor, lines)
        add = [case.addition] if case.addition else []
        sentence = case.sentence
        extra = []
        if self.once("bare_sources"):
            sentence = f"- [[{case.unit.paths[0]}]]"
        if case.related and self.once("relation_field"):
            extra = [f"related:: [[{case.related[0]}]]"]
        rewrite = next((m for m in ("prose_deleting_rewrite", "long_refusal",
                                    "whole_file_write") if self.once(m)), None)
        if rewrite is not None:
            if rewrite == "prose_deleting_rewrite":
                # Rewrite it shorter: the second paragraph goes (the lost 24 hours).
                new = [ln for i, ln in enumerate(lines) if i not in (3, 4)]
            elif rewrite == "long_refusal":
                # Keep the first paragraph, replace the whole Sources section with the new one.
                new = [ln for ln in lines[:lines.index("## Sources")] if ln.strip()][:2]
                new += ["", "## Sources", ""]
            else:  # the whole node again, with the addition: a write where edit would do
                new = list(lines)
            at = new.index(anchor) + 1 if anchor in new else len(new)
            new[at:at] = add if case.addition else []
            new += ["", sentence, *extra]
            args = {"path": case.target, "name": self.node_name(),
                    "description": case.unit.summary, "content": "\n".join(new) + "\n"}
            self.last_write = args
            return self.calls(("write", args))
        calls = []
        if add:
            calls.append(("edit", {"path": case.target, "old": anchor,
                                   "new": anchor + "\n\n" + "\n".join(add)}))
        last = lines[-1]
        calls.append(("edit", {"path": case.target, "old": last,
                               "new": last + "\n\n" + "\n".join([sentence, *extra])}))
        return self.calls(*calls)

    def node_name(self) -> str:
        return {IDEM: "Idempotency keys", SMALL_PR: "小型 PR"}[self.case.target]

    # -- reading what the tools said ---------------------------------------------------------
    def on_tool_results(self, results: list[str], messages: list[dict[str, Any]]
                        ) -> dict[str, Any]:
        last = results[-1]
        if self.stubborn and self.last_calls and last.startswith("Error:"):
            return self.calls(*self.last_calls)
        if "Field required" in last and self.last_calls:
            name, args = self.last_calls[-1]
            if name == "node_search":
                return self.calls(("node_search", {"query": self.case.unit.name, "limit": 20}))
            args = {**args, "description": self.case.unit.summary[:120]}
            self.last_write = args
            return self.calls((name, args))
        if "writes go only to digest/<bucket>/" in last and self.last_write is not None:
            args = {**self.last_write, "path": "digest/" + self.last_write["path"]}
            self.last_write = args
            return self.calls(("write", args))
        if last.startswith("Error: refused, nothing staged: an update keeps every line"):
            return self.put_back(last, messages)
        if "would hold the same sentence twice" in last:
            return self.receipt()
        if last.startswith(("Staged", "Error: refused")) or "Not acceptable yet" in last:
            if "Not acceptable yet" in last:
                if self.stubborn or self.once("ignores_feedback"):
                    return self.receipt()
                return self.fix(last)
            return self.receipt()
        if last.startswith("Error:"):
            raise AssertionError(f"the policy has no answer to {last[:300]!r}")
        # A search or a read: act now.
        body = self.node_body(messages) if self.case.action != "CREATE" else None
        return self.act(body)

    def put_back(self, refusal: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """Put every lost line back, word for word as the refusal quotes it, after the line
        that came before it in the node as the model saw it (its body line number says
        which): a cut quote would be put back cut, and refused again."""
        assert self.last_write is not None
        lost = [(int(n), json.loads(text)) for n, text in _LOST_RE.findall(refusal)]
        assert lost, refusal
        old = self.node_body(messages).rstrip("\n").split("\n")
        lines = self.last_write["content"].rstrip("\n").split("\n")
        blocks: list[tuple[int, list[str]]] = []  # consecutive lost lines stay one paragraph
        for n, text in lost:
            if blocks and blocks[-1][0] + len(blocks[-1][1]) == n:
                blocks[-1][1].append(text)
            else:
                blocks.append((n, [text]))
        for n, texts in blocks:
            before = [ln for ln in old[:n - 1] if ln.strip()]
            at = 0
            for prev in reversed(before):
                if prev in lines:
                    at = lines.index(prev) + 1
                    break
            lines[at:at] = ["", *texts] if at else [*texts, ""]
        args = {**self.last_write, "content": "\n".join(lines) + "\n"}
        self.last_write = args
        return self.calls(("write", args))

    def fix(self, feedback: str) -> dict[str, Any]:
        calls = []
        if "the node is written in English" in feedback:
            return self.write_new()
        problems = _PROBLEM_RE.findall(feedback)
        misplaced = {json.loads(q) for _, code, _, q in problems if code == "non-source-target"}
        for line in sorted(misplaced):
            # A digest link in Sources: move it into the body prose, as the message says.
            target = re.search(r"\[\[(digest/[^\]]+)\]\]", line)
            assert target is not None, line
            sentence = (f"这与 [[{target.group(1)}]] 相关。" if self.case.zh else
                        f"This relates to [[{target.group(1)}]].")
            calls += [("edit", {"path": self.case.target, "old": "\n" + line, "new": ""}),
                      ("edit", {"path": self.case.target, "old": "## Sources",
                                "new": f"{sentence}\n\n## Sources"})]
        for _, code, message, quoted in problems:
            line = json.loads(quoted)
            if line in misplaced:
                continue
            if code == "bare-source-link":
                target = re.search(r"\[\[([^\]]+)\]\]", line)
                assert target is not None
                new = (f"依据记录在 [[{target.group(1)}]]。" if self.case.zh else
                       f"The evidence for this is recorded in [[{target.group(1)}]].")
            elif code == "relation-field":
                target = re.search(r"\[\[([^\]]+)\]\]", line)
                assert target is not None
                new = (f"这与 [[{target.group(1)}]] 相关。" if self.case.zh else
                       f"This relates to [[{target.group(1)}]].")
            elif code == "broken-link":
                m = re.search(r"\[\[([^\]]+)\]\]: target does not exist \(did you mean (\S+)\?\)",
                              message)
                assert m is not None, message
                new = line.replace(f"[[{m.group(1)}]]", f"[[{m.group(2)}]]")
            else:
                raise AssertionError(f"no fix for {code}: {message}")
            if all(args["old"] != line for _, args in calls):
                calls.append(("edit", {"path": self.case.target, "old": line, "new": new}))
        assert calls, feedback
        return self.calls(*calls)

    # -- the receipt ---------------------------------------------------------------------------
    def receipt(self, action: str | None = None) -> dict[str, Any]:
        case = self.case
        action = action or case.action
        if self.once("update_action") or (self.stubborn and "update_action" in self.mistakes):
            action = "UPDATE"
        labels = {p: "related" for p in case.related}
        if case.action != "CREATE":
            labels[case.target] = "same"
        data = {"action": action, "target_path": case.target,
                "note": "整合了新来源" if case.zh else "integrated the new source",
                "classification": labels}
        text = json.dumps(data, ensure_ascii=False)
        if self.once("no_receipt"):
            text = "完成了。" if case.zh else "Done: the node now cites the new note."
        elif self.once("receipt_fenced"):
            text = f"Here is the receipt:\n```json\n{text}\n```"
        elif self.once("receipt_prose"):
            text = (f"I updated the node.\naction: {action}\ntarget_path: {case.target}\n"
                    f"note: {data['note']}")
        self.last_calls = []
        return completion(content=text)

    def on_feedback(self, feedback: str) -> dict[str, Any]:
        if self.stubborn:
            return self.receipt()
        if feedback.startswith(("Your receipt was not accepted", "回执未被接受")):
            if self.once("repeat_edit_on_feedback") and self.last_edits():
                return self.calls(*self.last_edits())
            return self.receipt()
        if "cannot be accepted yet" in feedback or "还不能接受" in feedback:
            return self.fix(feedback)
        raise AssertionError(f"unexpected feedback {feedback[:300]!r}")

    def last_edits(self) -> list[tuple[str, dict[str, Any]]]:
        return self.edits


# -- running a unit -----------------------------------------------------------------------------

@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with serving() as srv:
        yield srv
    assert not srv.errors, srv.errors[0]  # the policy itself must never fail


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")


@dataclass
class Outcome:
    result: UnitResult
    policy: Realistic
    before: dict[str, bytes]
    vault: Path


def integrate_with(tmp_path: Path, server: FakeOpenAI, case: Case, mistakes: set[str], *,
                   stubborn: bool = False) -> Outcome:
    vault = copy_vault(tmp_path)
    prepare(vault)
    before = tree_bytes(vault)
    policy = Realistic(case, frozenset(mistakes), stubborn=stubborn)
    server.policy = policy
    settings = replace(load_settings(vault, env={}), api_base=server.base, retries=0,
                       timeout=10.0)
    model = LiteLLMModel("openai/test-model", settings, sleep=lambda s: None)
    result = integrate_unit(context(vault, model, index=TermIndex(vault)), case.unit)
    return Outcome(result, policy, before, vault)


def assert_landed(out: Outcome) -> None:
    """Accepted within budget; only the target changed; it keeps every line it had, lints
    clean, cites the unit; the tokens are what the server charged."""
    result, case, vault = out.result, out.policy.case, out.vault
    settings = load_settings(vault, env={})
    assert result.ok, (result.error, out.policy.seen)
    assert result.steps <= settings.auto_dream.max_steps
    assert result.repairs <= settings.auto_dream.repair_turns
    assert (result.action, result.target) == (case.action, case.target)
    after = tree_bytes(vault)
    changed = {p for p in set(after) | set(out.before) if after.get(p) != out.before.get(p)}
    assert changed == {case.target}
    final = read_note(vault, case.target)
    if case.target in out.before:
        original = parse_text(case.target, out.before[case.target].decode("utf-8"))
        assert lost_lines(original, final) == []
        if "bare_sources" not in out.policy.made:  # else its own repair sentence cites it
            assert case.sentence in final.body
        if case.addition:
            assert case.addition in final.body
    else:
        original = None
    verdict = validate(VaultFiles.scan(vault), settings, case.unit, final, original,
                       language="zh" if case.zh else "en", action=result.action)
    assert verdict.problems == []


def tokens_match(out: Outcome, server: FakeOpenAI) -> None:
    assert out.result.usage.prompt_tokens == server.prompt_tokens > 0
    assert out.result.steps == len(server.requests) == out.policy.turns


# -- each mistake alone, in English and Chinese ---------------------------------------------------

ALONE = {
    # mistake: the cases it applies to
    "whole_file_write": ["en-update", "zh-update"],
    "prose_deleting_rewrite": ["en-update", "zh-update"],
    "long_refusal": ["en-update", "zh-update"],
    "bare_sources": ["en-create", "zh-create", "en-update", "zh-update"],
    "relation_field": ["en-create", "zh-create", "en-update"],
    "link_no_md": ["en-create", "zh-create"],
    "no_digest_prefix": ["en-create", "zh-create"],
    "missing_args": ["en-create", "zh-create", "en-update"],
    "receipt_prose": ["en-create", "zh-update"],
    "receipt_fenced": ["en-update", "zh-create"],
    "no_receipt": ["en-create", "zh-create", "en-update", "zh-update"],
    "update_action": ["en-update", "zh-update"],
    "ignores_feedback": ["en-create", "zh-create"],
    "repeat_edit_on_feedback": ["en-update", "zh-update"],
    "english_for_chinese": ["zh-create"],
}
# Mistakes that cost a repair turn or a refused call: the unit needs more than two turns.
COSTLY = {"prose_deleting_rewrite", "long_refusal", "bare_sources", "relation_field",
          "link_no_md", "no_digest_prefix", "missing_args", "no_receipt", "update_action",
          "ignores_feedback", "english_for_chinese"}
# For ignores_feedback / repeat_edit_on_feedback there must be something to ignore or repeat.
NEEDS = {"ignores_feedback": {"bare_sources"}, "repeat_edit_on_feedback": {"update_action"}}


@pytest.mark.parametrize(("mistake", "name"),
                         [(m, c) for m, cases in ALONE.items() for c in cases])
def test_each_mistake_alone_is_repaired_within_budget(tmp_path: Path, server: FakeOpenAI,
                                                      mistake: str, name: str) -> None:
    mistakes = {mistake} | NEEDS.get(mistake, set())
    out = integrate_with(tmp_path, server, CASES[name], mistakes)
    assert_landed(out)
    tokens_match(out, server)
    assert out.policy.made == mistakes  # it really made each mistake
    if mistake not in COSTLY and not NEEDS.get(mistake):
        assert out.result.steps <= 3
    said = "\n".join(out.policy.seen)
    if mistake == "repeat_edit_on_feedback":
        # Told its receipt was wrong, it repeated the edit: refused, the sentence is not doubled.
        assert "would hold the same sentence twice" in said
        assert "The node you staged is kept as it is" in said or "已暂存的节点保持不变" in said
    if mistake in ("bare_sources", "relation_field", "link_no_md"):
        assert "Not acceptable yet" in said  # named by the write/edit itself, not the receipt


@pytest.mark.parametrize("name", list(CASES))
def test_a_clean_unit_takes_two_turns(tmp_path: Path, server: FakeOpenAI, name: str) -> None:
    """The recall is in the first message: write or edit, then the receipt."""
    out = integrate_with(tmp_path, server, CASES[name], set())
    assert_landed(out)
    tokens_match(out, server)
    assert (out.result.steps, out.result.repairs) == (2, 0)
    first = server.requests[0]["body"]["messages"][1]["content"]
    assert "Candidates (node_search, best first):" in first or \
        "候选（node_search，按相关度排序）：" in first


# -- the two the issue measured, in detail ------------------------------------------------------

def test_the_prose_deleting_rewrite_is_refused_then_repaired(tmp_path: Path,
                                                             server: FakeOpenAI) -> None:
    out = integrate_with(tmp_path, server, EN_UPDATE, {"prose_deleting_rewrite"})
    assert_landed(out)
    refusal = next(s for s in out.policy.seen if s.startswith("Error: refused"))
    assert refusal.split("\n")[1:3] == [
        '- body line 4 would be lost: "The server stores the key with the first response for '
        '24 hours and replays that response when"',
        '- body line 5 would be lost: "the key comes back."']
    assert "The server stores the key with the first response for 24 hours" in \
        (out.vault / IDEM).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["en-update", "zh-update"])
def test_a_long_refusal_is_complete_and_repaired(tmp_path: Path, server: FakeOpenAI,
                                                 name: str) -> None:
    out = integrate_with(tmp_path, server, CASES[name], {"long_refusal"})
    assert_landed(out)
    refusal = next(s for s in out.policy.seen if s.startswith("Error: refused"))
    long = LONG_ZH if name == "zh-update" else LONG_EN
    # Every lost line whole: the old 600-character cut ended inside the second one.
    assert len(refusal) > 800
    for sentence in long:
        assert f'would be lost: "{sentence}"' in refusal
    assert refusal.endswith("next to the link to the new source.")
    assert out.result.steps == 3  # the rewrite, the rewrite with the lines put back, receipt


# -- combined -----------------------------------------------------------------------------------

COMBINED = {
    "en-create": {"missing_args", "no_digest_prefix", "link_no_md", "bare_sources",
                  "relation_field", "ignores_feedback", "no_receipt"},
    "zh-create": {"english_for_chinese", "missing_args", "no_digest_prefix", "link_no_md",
                  "bare_sources", "receipt_fenced", "update_action"},
    "en-update": {"missing_args", "prose_deleting_rewrite", "relation_field", "update_action",
                  "repeat_edit_on_feedback", "receipt_prose"},
    "zh-update": {"long_refusal", "bare_sources", "no_receipt", "receipt_fenced"},
}


@pytest.mark.parametrize("name", list(COMBINED))
def test_mistakes_combined_are_repaired_within_budget(tmp_path: Path, server: FakeOpenAI,
                                                      name: str) -> None:
    out = integrate_with(tmp_path, server, CASES[name], COMBINED[name])
    assert_landed(out)
    tokens_match(out, server)
    assert out.policy.made == COMBINED[name]


# -- a model that never repairs fails cleanly, and its tokens still count -------------------------

@pytest.mark.parametrize(("name", "mistakes"), [
    ("en-create", {"bare_sources"}), ("zh-create", {"english_for_chinese"}),
    ("en-update", {"prose_deleting_rewrite"}), ("zh-update", {"update_action"}),
])
def test_a_stubborn_model_fails_cleanly_and_is_counted(tmp_path: Path, server: FakeOpenAI,
                                                       name: str, mistakes: set[str]) -> None:
    out = integrate_with(tmp_path, server, CASES[name], mistakes, stubborn=True)
    assert out.result.status == "failed" and not out.result.infrastructure
    assert tree_bytes(out.vault) == out.before
    tokens_match(out, server)
    assert out.result.steps > 2 and out.result.seconds > 0
    error = out.result.error
    assert error is not None and "\n" not in error
    # The error names the cause, not only the budget.
    if "prose_deleting_rewrite" in mistakes:
        # It sends the refused rewrite again and again: each repeat is a repair, so the unit
        # stops after the repair budget, not after 30 turns.
        assert error.startswith("repair budget (3) used up: the model sent a refused call "
                                "again unchanged (write: Error: refused, nothing staged")
        assert out.result.steps == 5
    else:
        assert error.startswith("answer not accepted after 3 repair turn(s): ")


# -- a whole dream run: failed units are counted in the output, --json, the audit and status ----

class Run:
    """The model for a whole `dream run`: extraction answers three units, tagging none, and
    each unit's integration is its own Realistic (one of them stubborn, so it fails)."""

    def __init__(self) -> None:
        self.units = {EN_CREATE.unit.name: Realistic(EN_CREATE, frozenset({"bare_sources"})),
                      EN_UPDATE.unit.name: Realistic(EN_UPDATE, frozenset({"update_action"}),
                                                    stubborn=True),
                      ZH_CREATE.unit.name: Realistic(ZH_CREATE, frozenset({"no_receipt"}))}
        self.requests: list[tuple[str, int]] = []   # (unit name or task, prompt tokens)

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        first = str(body["messages"][1]["content"])
        if '"task": "extract"' in first:
            task = json.loads(first.split("```json\n", 1)[1].split("\n```", 1)[0])
            units = [{**c.unit.as_dict(), "paths": list(c.unit.paths)}
                     for c in (EN_CREATE, EN_UPDATE, ZH_CREATE)]
            for u in units:
                u.pop("id", None)
            cited = {p for c in (EN_CREATE, EN_UPDATE, ZH_CREATE) for p in c.unit.paths}
            verdicts = [{"path": p, "verdict": "units"} if p in cited else
                        {"path": p, "verdict": "nothing", "reason": "no reusable rule"}
                        for p in task["changed_paths"]]
            self.requests.append(("extract", 0))
            return completion(content=json.dumps({"units": units, "verdicts": verdicts},
                                                 ensure_ascii=False))
        if '"task": "tag"' in first:
            self.requests.append(("tag", 0))
            return completion(content='{"tags": []}')
        name = json.loads(first.split("```json\n", 1)[1].split("\n```", 1)[0])["name"]
        self.requests.append((name, 0))
        return self.units[name](body)


def test_a_dream_run_counts_the_tokens_of_failed_units_everywhere(
        tmp_path: Path, server: FakeOpenAI) -> None:
    from dream_support import audit_lines, cli
    from llm_support import charge

    vault = copy_vault(tmp_path)
    prepare(vault)
    (vault / ".remelink").mkdir(exist_ok=True)
    (vault / ".remelink" / "config.yaml").write_text(
        f"model: openai/test-model\napi_base: {server.base}\nretries: 0\n", encoding="utf-8")
    model = Run()
    server.policy = model
    result = cli("dream", "run", "--vault", str(vault), "--quiet", "--json",
                 "--today", "2026-06-25")
    data = json.loads(result.stdout)
    by_unit: dict[str, int] = {}
    for (name, _), request in zip(model.requests, server.requests, strict=True):
        by_unit[name] = by_unit.get(name, 0) + charge(request["body"])
    failed = by_unit[EN_UPDATE.unit.name]
    assert failed > 0
    counts = data["counts"]
    assert (counts["units_integrated"], counts["units_failed"]) == (2, 1)
    # Every token the server charged is in the run's count, the failed unit's too.
    assert counts["tokens_in"] == server.prompt_tokens
    assert counts["tokens_in_failed"] == failed
    units = {u["name"]: u for u in data["data"]["units"]}
    assert units[EN_UPDATE.unit.name]["status"] == "failed"
    assert units[EN_UPDATE.unit.name]["tokens_in"] == failed
    assert units[EN_UPDATE.unit.name]["steps"] == model.units[EN_UPDATE.unit.name].turns > 0
    assert units[EN_CREATE.unit.name]["tokens_in"] == by_unit[EN_CREATE.unit.name]
    # The audit line of the failed unit carries its cost and its candidates.
    line = next(a for a in audit_lines(vault) if a["name"] == EN_UPDATE.unit.name)
    assert (line["status"], line["tokens_in"]) == ("failed", failed)
    assert line["steps"] > 0 and line["duration_ms"] > 0 and line["candidates"]
    # The model's own classification of the candidates is in the audit.
    done = next(a for a in audit_lines(vault) if a["name"] == EN_CREATE.unit.name)
    assert done["classified_by_model"] == sorted(EN_CREATE.related, key=lambda p: [
        c["path"] for c in done["candidates"]].index(p))
    assert {p: done["classification"][p] for p in EN_CREATE.related} == {
        p: "related" for p in EN_CREATE.related}
    # And status shows it.
    status = cli("status", "--vault", str(vault))
    assert f"tokens {server.prompt_tokens} in ({failed} on failed units)" in status.stdout

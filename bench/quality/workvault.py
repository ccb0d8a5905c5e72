"""A realistic work-notes vault for the orphan measurement (bench/quality/orphans.py): four weeks
of one backend engineer's daily notes and two design documents, in English and Chinese, written
the way such notes are written (a meeting, an incident, a decision, a how-to, a preference),
with topics that come back across notes: deploys and migrations, the payments retry incident,
rate limits, on-call alerts, code review, log masking. Nothing in it was chosen to suit the
engine; it is the kind of vault `dream run` meets.

    write(root)  # lays the notes out under root/daily and root/resource, with .remelink/
"""

from __future__ import annotations

from pathlib import Path

NOTES: dict[str, str] = {
    "daily/2026-03-02/standup.md": """\
# Standup

- Carol is on call this week.
- The deploy of the billing service failed twice on Friday because the migration locked the
  invoices table.

## Decision
- Schema migrations ship in their own deploy, before the code that needs them.
""",
    "daily/2026-03-03/migration-runbook.md": """\
# How we run a schema migration

## How to run a schema migration
1. Open a migration-only pull request and get one review from the database owner.
2. Run the migration on staging with a copy of production data and time it.
3. If it takes more than 30 seconds, split it into batches.
4. Deploy the migration alone, then deploy the code that uses it.

## Failure modes
- A migration that rewrites a large table holds a lock and stalls every write to it.
""",
    "daily/2026-03-05/incident-payments.md": """\
# Incident: duplicate payouts

## What happened
The payout worker retried after a timeout from the bank API and sent the same payout twice.

## Decision
- Every call to the bank API carries an idempotency key built from the payout id.

## Lessons
- Retries without an idempotency key turn a timeout into a duplicate payment.
""",
    "daily/2026-03-09/review-meeting.md": """\
# Code review meeting

Attendees: Carol, Dan, me.

## Preferences
- Dan prefers review comments that say what to change, not only what is wrong.
- The team prefers pull requests under 400 lines, because larger ones get skimmed.

## Decision
- Every pull request that touches the database needs a review from the database owner.
""",
    "daily/2026-03-11/rate-limits.md": """\
# Rate limits for the public API

## Decision
We decided to rate-limit the public API per API key, at 100 requests per minute, with a
burst of 20.

## How to raise a customer's rate limit
1. Check the customer's last 30 days of traffic in the dashboard.
2. Ask the account owner to approve the new limit.
3. Set the limit on the API key in the admin console.
""",
    "daily/2026-03-12/oncall-handover.md": """\
# On-call handover

- Carol handed over to Dan.
- Alerts for the payout worker fired three times; all were bank API timeouts.

## Rule
- An alert that fires more than twice a week without action must be tuned or deleted.
""",
    "daily/2026-03-16/周会.md": """\
# 周会

参会：小王、小李、我。

## 决定
- 所有对外接口的超时时间统一为 5 秒。
- 发布前必须在预发环境跑完回归测试。

## 偏好
- 小王希望告警消息里直接带上排查文档的链接。
""",
    "daily/2026-03-17/日志脱敏.md": """\
# 日志脱敏

## 决定
- 写入日志的手机号、身份证号和银行卡号必须先脱敏，只保留后四位。

## 操作步骤
1. 在日志中间件里注册脱敏过滤器。
2. 用正则匹配手机号、身份证号和银行卡号，替换为星号。
3. 上线前用样例日志验证脱敏结果。
""",
    "daily/2026-03-19/deploy-retro.md": """\
# Deploy retro

## What happened
The Thursday deploy shipped a migration and the code together again, and the invoices table
was locked for four minutes.

## Decision
- The deploy pipeline refuses a release that contains both a migration and code changes.
""",
    "daily/2026-03-23/发布流程.md": """\
# 发布流程复盘

## 决定
- 发布窗口固定在周二和周四下午，周五不发布。

## 操作步骤
1. 发布前在预发环境跑完回归测试。
2. 先发布数据库迁移，确认无锁表后再发布代码。
3. 发布后观察错误率十五分钟。

## 经验
- 数据库迁移和代码一起发布，会导致锁表。
""",
    "daily/2026-03-24/alerts.md": """\
# Alert tuning

## Decision
- The payout worker alert now fires only after five bank API timeouts in ten minutes.

## Preferences
- Carol prefers alerts that link to the runbook for the failure they report.
""",
    "daily/2026-03-26/cache.md": """\
# Caching the pricing lookups

## Decision
We decided to cache pricing lookups for 10 minutes in Redis, keyed by plan and region.

## Failure modes
- A price change is visible only after the cache entry expires.
""",
    "daily/2026-03-30/1on1.md": """\
# 1:1 with Dan

- Dan wants to own the rate limit dashboard.
- Dan prefers written design notes before a meeting, so he can read them in advance.
""",
    "daily/2026-04-01/rate-limit-incident.md": """\
# Rate limit incident

## What happened
A customer hit the rate limit during a batch import and their import failed half-way.

## Decision
- Batch imports use a separate limit of 500 requests per minute per API key.
""",
    "resource/2026-03-10/payout-design.md": """\
# Payout worker design

The payout worker takes payouts from a queue and calls the bank API. Each call carries an
idempotency key derived from the payout id, so a retried call cannot pay twice. The worker
retries a timeout up to 3 times with exponential backoff, then parks the payout for a human.
""",
    "resource/2026-03-18/日志规范.md": """\
# 日志规范

所有服务统一输出 JSON 格式日志，字段包括时间、级别、请求 ID 和消息。
敏感字段在写入前由日志中间件脱敏。
""",
}


def write(root: Path) -> Path:
    """Lay the vault out under `root` (created) and return it."""
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / ".remelink").mkdir(parents=True, exist_ok=True)
    (root / ".remelink" / "config.yaml").write_text("model: local\n", encoding="utf-8")
    return root

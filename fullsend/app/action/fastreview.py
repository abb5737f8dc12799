"""The head-reviewed skip's three reads before the application is loaded (docs/architecture.md
"Fast skip", docs/rules.md#head-reviewed).

The same reads as ``fullsend.app.action.preflight.check_head_reviewed`` makes through the
forge — this run under the job token, the pull request and its reviews under the role token,
the same REST endpoints — sent at once over ``fullsend.adapters.github.lite`` and checked by
``fullsend.adapters.github.lite_rest`` as strictly as the forge's records.  ``check_head_reviewed``
itself decides over them.  Anything in doubt (a non-200 answer, a 404 included, an unknown
shape, a full page of reviews, a read for another run or item) raises ``Undecided``: the full
pre-flight then decides.  Standard library and core only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from urllib.parse import quote

from fullsend.adapters.github import lite, lite_rest
from fullsend.app.action.facts import PreflightFacts
from fullsend.core.model import PullRequest, Review, WorkflowRun

PER_PAGE = lite_rest.PER_PAGE


class HeadReads:
    """The run, the pull request and its reviews of ``facts``, read once, at once.

    ``calls()`` are the three requests, for a caller that sends them beside its own (the
    receipt view's first page); :meth:`keep` takes their answers in that order.  Otherwise the
    first read sends them through ``send`` (``lite.concurrently`` with the caller's wake-up)."""

    def __init__(
        self,
        facts: PreflightFacts,
        client: lite.LiteClient,
        send: Callable[..., list[lite.LiteAnswer]],
        wanted: bool,
        prefetched: dict[str, dict[str, lite.LiteAnswer]],
    ) -> None:
        self.wanted = wanted  # the pre-checks pass: worth sending beside the receipt view
        self._facts, self._client, self._send, self._prefetched = facts, client, send, prefetched
        owner, _, name = facts.repository.partition("/")
        base = f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"
        item = facts.item_number
        self._reads = {  # label → (credential, path): the forge's get_run, get_pull_request, list_reviews
            "run": ("job", f"{base}/actions/runs/{facts.run_id}"),
            "pull request": ("role", f"{base}/pulls/{item}"),
            "reviews": ("role", f"{base}/pulls/{item}/reviews?per_page={PER_PAGE}"),
        }
        self._answers: Mapping[str, lite.LiteAnswer] | None = None

    def calls(self) -> list[Callable[[], lite.LiteAnswer]]:
        tokens = {"job": self._facts.job_token, "role": self._facts.role_token}
        return [partial(self._client.get, tokens[cred], path) for cred, path in self._reads.values()]

    def keep(self, answers: list[lite.LiteAnswer]) -> None:
        self._answers = self._recorded(answers)

    def _recorded(self, answers: list[lite.LiteAnswer]) -> dict[str, lite.LiteAnswer]:
        """The three answers by label; each 200 is also handed to the full path (``prefetched``),
        which checks it as it checks its own."""
        for (credential, path), answer in zip(self._reads.values(), answers, strict=True):
            if answer.status == 200:
                self._prefetched.setdefault(credential, {})[lite.rest_prefetch_key(path)] = answer
        return dict(zip(self._reads, answers, strict=True))

    def _data(self, label: str) -> object:
        answers = self._answers
        if answers is None:
            answers = self._answers = self._recorded(self._send(*self.calls()))
        return lite_rest.rest_data(answers[label], f"GET {label}")

    def get_run(self, run_id: int) -> WorkflowRun:
        if run_id != self._facts.run_id:
            raise lite.Undecided("a read of another run")
        return lite_rest.run_created(self._data("run"), "GET run")

    def get_pull_request(self, number: int) -> PullRequest:
        if number != self._facts.item_number:
            raise lite.Undecided("a read of another pull request")
        data = self._data("pull request")
        return PullRequest(number=number, head_sha=lite_rest.pull_head(data, "GET pull request"))

    def list_reviews(self, number: int) -> list[Review]:
        if number != self._facts.item_number:
            raise lite.Undecided("a read of another pull request")
        return lite_rest.reviews(self._data("reviews"), "GET reviews")

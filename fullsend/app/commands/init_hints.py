"""What ``fullsend init`` prints after writing: the next steps per role-token mode and the
conditions on which Route starts Fix (docs/adopting.md "Start with fullsend init")."""

from __future__ import annotations

#: Where to create the GitHub App from (docs/adopting.md "Create the GitHub App from the manifest").
APP_MANIFEST_URL = "https://github.com/fullsend-ai/steer-action/blob/main/app-manifest.json"

#: The one naming rule the fix stage has (docs/rules.md#route-review-ignored), said where it is set.
FIX_TRIGGER_HINT = {
    True: (
        "Fix starts (docs/rules.md, route-review-fix) on a changes_requested review by the review App\n"
        "(review_app in fullsend.yml; empty: <owner>-review[bot]) on a pull request of this repository\n"
        "(not a fork's) that is not labelled fullsend-no-fix, whose author is an App or that is labelled\n"
        "fullsend-fix (then the author needs write), at most max_fix_rounds (3) times per pull request;\n"
        "or on /fs-fix from someone with write. The review job uses FULLSEND_REVIEW_APP_CLIENT_ID and\n"
        "FULLSEND_REVIEW_APP_PRIVATE_KEY when set: use a second App there if an App authors the pull\n"
        "requests (GitHub refuses a changes-requested review by the pull request's author).\n"
    ),
    False: (
        "Fix starts (docs/rules.md, route-review-fix) on a changes_requested review by the review App\n"
        "(review_app: on the Route step in fullsend-dispatch.yml; empty: <owner>-review[bot]) on a pull\n"
        "request of this repository (not a fork's) that is not labelled fullsend-no-fix, whose author is\n"
        "an App or that is labelled fullsend-fix (then the author needs write), at most max_fix_rounds\n"
        "(3) times per pull request; or on /fs-fix from someone with write. The review job uses\n"
        "FULLSEND_REVIEW_APP_CLIENT_ID and FULLSEND_REVIEW_APP_PRIVATE_KEY when set: use a second App\n"
        "there if an App authors the pull requests (GitHub refuses a changes-requested review by the\n"
        "pull request's author).\n"
    ),
}

NEXT_STEPS = {
    "app": (
        "Next: create a GitHub App for the agent from the manifest\n"
        f"  {APP_MANIFEST_URL}\n"
        '(docs/adopting.md "Create the GitHub App from the manifest": one form, docs/create-app.html),\n'
        "and install it on the repository; set the repository variable FULLSEND_APP_CLIENT_ID and the\n"
        "secrets FULLSEND_APP_PRIVATE_KEY and {secrets}; then run `fullsend lint` and commit.\n"
    ),
    "mint": (
        "Next: set the repository variable FULLSEND_MINT_URL to your mint service (docs/adopting.md\n"
        '"The mint protocol") and the secret {secrets}; then run `fullsend lint` and commit.\n'
    ),
}

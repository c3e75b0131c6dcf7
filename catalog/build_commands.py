"""The commands that get a variant built and installed: the one place they are composed.

The variant page, the selector, the wizard and `which-variant` all print these. Pure Python: no
Django import.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog import vocabulary

# `flox publish -o <org>`: the reader's Flox organisation when they have not given one.
DEFAULT_ORG = "<your-org>"


@dataclass(frozen=True)
class Step:
    label: str
    template: str
    # The label when the step it follows is not listed (a checkout without the clone before it).
    label_alone: str = ""
    after: str = ""


STEPS = {
    "clone": Step("Clone the repository", "git clone {url}\ncd {repository}"),
    "checkout": Step(
        "Check out the branch",
        "git checkout {branch}",
        "Check out the branch (in a clone of {repository})",
        "clone",
    ),
    "build": Step("Build", "flox build {pname}"),
    "publish": Step("Publish to your organisation", "flox publish -o {org} {pname}"),
    "install": Step(
        "Install elsewhere",
        "flox install {org}/{pname}",
        "Install (after flox publish)",
        "publish",
    ),
}
ALL_STEPS = tuple(STEPS)


def variant_commands(
    repository: str,
    branch: str,
    pname: str,
    org: str = DEFAULT_ORG,
    steps: tuple[str, ...] = ALL_STEPS,
) -> list[tuple[str, str, str]]:
    """(key, label, command) for each of `steps`, in the order they are run."""
    values = {
        "repository": repository,
        "url": vocabulary.REPOSITORIES[repository].url,
        "branch": branch,
        "pname": pname,
        "org": org,
    }
    out = []
    for key in steps:
        step = STEPS[key]
        label = step.label_alone if step.after and step.after not in steps else step.label
        out.append((key, label.format(**values), step.template.format(**values)))
    return out

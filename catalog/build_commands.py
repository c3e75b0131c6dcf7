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


# What each status means for someone about to run the commands: shown before them, everywhere.
STATUS_NOTES = {
    "planned": "not buildable yet: its branch lacks what it needs (e.g. a nixpkgs pin with its "
    "CUDA version), so these commands will fail until it has it.",
    "recipe": "the recipe exists but no successful build is recorded; the build below would be "
    "the first.",
    "building": "a build is under way; nothing is published to install yet.",
    "built": "a build succeeded; publish it to install it elsewhere.",
    "failed": "its last build failed (see the variant's build history); these commands are "
    "expected to fail again until the recipe is fixed.",
    "published": "a build is published; installing it is enough.",
}
# How far along each status is: a variant less far along names the nearest one further along.
PROGRESS = {"planned": 0, "failed": 0, "recipe": 1, "building": 1, "built": 2, "published": 3}
BUILT = 2  # PROGRESS from which a variant is built
# The fields a nearby variant may differ in (it runs on the same hardware), and their names.
DIFFERENCES = (
    ("branch", "branch"),
    ("cuda_version", "CUDA"),
    ("python_version", "Python"),
    ("isa", "CPU ISA"),
)


def nearest_further(variant, variants) -> tuple[object, list[str]] | None:
    """The variant for the same library and hardware (backend, GPU architecture, platform)
    that is further along and differs in the fewest fields, with those differences as phrases
    ("CUDA 12.8 instead of 13.0"); None when the variant is built or nothing is further along.

    `variant` and `variants` read like catalog.wizard.snapshot.VariantInfo records."""
    progress = PROGRESS.get(variant.status, 0)
    if progress >= BUILT:
        return None
    best = None
    for other in variants:
        further = PROGRESS.get(other.status, 0)
        if further <= progress or any(
            getattr(other, f) != getattr(variant, f)
            for f in ("library", "backend", "sm", "platform")
        ):
            continue
        diffs = [
            f"{label} {getattr(other, f) or 'none'} instead of {getattr(variant, f) or 'none'}"
            for f, label in DIFFERENCES
            if getattr(other, f) != getattr(variant, f)
        ]
        key = (len(diffs), -further, other.pname)
        if best is None or key < best[0]:
            best = (key, other, diffs)
    return (best[1], best[2]) if best else None

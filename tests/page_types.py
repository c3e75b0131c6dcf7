"""One URL per page type, for the tests that check every page (template leaks, phone widths)."""

from urllib.parse import urlencode

SM90 = "/variants/build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx512/"
WIZARD_RESULT = "/wizard/?" + urlencode(
    {
        "os": "linux",
        "arch": "x86_64",
        "has_gpu": "yes",
        "compute_cap": "9.0",
        "isa": "avx512",
        "workload": "general",
        "library": "",
    }
)

# (name, path, expected status)
PAGES = [
    ("home", "/", 200),
    ("variants", "/variants/", 200),
    ("variants list, all", "/variants/?view=list&per_page=all", 200),
    ("variants grid", "/variants/?view=grid", 200),
    ("variant", SM90, 200),
    ("branches", "/branches/", 200),
    ("branch", "/branches/build-pytorch/main/", 200),
    ("architectures", "/architectures/", 200),
    ("architecture", "/architectures/sm90/", 200),
    ("isas", "/isas/", 200),
    ("isa", "/isas/avx512/", 200),
    ("docs", "/docs/", 200),
    ("doc", "/docs/overview/", 200),
    ("wizard", "/wizard/", 200),
    ("wizard result", WIZARD_RESULT, 200),
    ("audit", "/audit/", 200),
    ("404", "/no-such-page/", 404),
]
# The matrix's results fragment, as htmx asks for it.
PARTIAL = "/variants/?gpu=sm90"

"""`/etc/os-release` (a Linux distribution)."""

from __future__ import annotations

from catalog.wizard.detect.facts import Facts, short, split_lines

SOURCE = "os-release"
MARKERS = ("NAME=", "ID=")
KEYS = frozenset(
    {
        "NAME",
        "PRETTY_NAME",
        "ID",
        "ID_LIKE",
        "VERSION",
        "VERSION_ID",
        "VERSION_CODENAME",
        "UBUNTU_CODENAME",
        "HOME_URL",
        "SUPPORT_URL",
        "BUG_REPORT_URL",
        "PRIVACY_POLICY_URL",
        "LOGO",
        "ANSI_COLOR",
        "CPE_NAME",
        "BUILD_ID",
        "VARIANT",
        "VARIANT_ID",
        "PLATFORM_ID",
        "DOCUMENTATION_URL",
    }
)


def parse_os_release(text: str) -> Facts:
    return parse(split_lines(text))[0]


def parse(lines: list[str]) -> tuple[Facts, set[int]]:
    facts, used = Facts(), set()
    for i, line in enumerate(lines):
        key, found, value = line.strip().partition("=")
        if found and key in KEYS:
            used.add(i)
            if key == "PRETTY_NAME":
                facts.distro = short(value.strip().strip('"'))
    if used:
        facts.sources.append(SOURCE)
        facts.os = "linux"
    return facts, used

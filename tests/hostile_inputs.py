"""Adversarial tool output for the paste parsers: the inputs that used to take tens
of seconds, each about 256 KB. Shared by tests/test_hostile.py (a generous bound) and
bench/detect.py (the figures)."""

from __future__ import annotations

KB = 1024
SMI_HEADER = (
    "+-----------------------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |\n"
    "|=========================================+========================+======================|\n"
)


def _fill(block: str, size: int = 256 * KB) -> str:
    """`block` repeated up to `size` bytes (at least once)."""
    return block * max(1, size // len(block))


def inputs() -> dict[str, tuple[str, str]]:
    """name -> (the parser it targets, text)."""
    long_value = " " * 64_000
    row = "|   0  " + "NVIDIA " * 9_000 + "x" + " " * 1_000 + "|   00000000:00:06.0 Off |\n"
    return {
        # Each line once over the line bound (skipped), and again just under it (parsed).
        "lscpu value, 64 KB line": (
            "lscpu",
            _fill("Architecture: x86_64\nModel name:    x" + long_value + "y\n"),
        ),
        "lscpu value, 8 KB lines": (
            "lscpu",
            "Architecture: x86_64\n" + _fill("Model name:    x" + " " * 8_000 + "y\n"),
        ),
        "lscpu key without a colon": (
            "lscpu",
            _fill("Architecture: x86_64\n" + "A" * 8_000 + "\n"),
        ),
        "nvidia-smi row, 64 KB": ("nvidia-smi", SMI_HEADER + _fill(row, 252 * KB)),
        "nvidia-smi memory digits": (
            "nvidia-smi",
            SMI_HEADER + _fill("|   0  " + "1" * 8_000 + "MiB /\n", 252 * KB),
        ),
        "nvidia-smi -q value": (
            "nvidia-smi -q",
            "==NVSMI LOG==\n" + _fill("    Product Name" + " " * 8_000 + "x\n"),
        ),
        "cpuinfo value, 64 KB line": (
            "/proc/cpuinfo",
            _fill("processor\t: 0\nmodel name\t: x" + long_value + "y\n"),
        ),
        "cpuinfo value, 8 KB lines": (
            "/proc/cpuinfo",
            "processor\t: 0\n" + _fill("model name\t: x" + " " * 8_000 + "y\n"),
        ),
        "sysctl value": ("sysctl", _fill("machdep.cpu.brand_string: x" + " " * 8_000 + "y\n")),
        "uname-like lines": ("uname", _fill("Linux " + "x " * 4_000 + "\n")),
        "GPU names, one a line": (
            "nvidia-smi --query-gpu",
            _fill("NVIDIA GeForce RTX 4090 Laptop GPU\n"),
        ),
        "compute capabilities": ("nvidia-smi --query-gpu", "9.0\n" * 65_000),
        "csv rows": (
            "nvidia-smi --query-gpu",
            _fill("NVIDIA H100, " + "9.0, " * 1_500 + "580.1\n"),
        ),
        "GPU name of many words": (
            "nvidia-smi --query-gpu",
            _fill("NVIDIA " + "x " * 4_000 + "\n"),
        ),
        "23 KB wizard paste": ("(all)", _fill("NVIDIA A100-SXM4-80GB\nTesla T4 ...\n", 23 * KB)),
    }

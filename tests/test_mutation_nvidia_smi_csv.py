"""The `nvidia-smi --query-gpu` CSV reader at its edges: what a row, a header, a GPU name and a
one-value-a-line paste must look like to be read, and what is left alone."""

from __future__ import annotations

import pytest

from catalog.wizard.detect import nvidia_smi_csv as csv
from catalog.wizard.detect.facts import MAX_GPU_LINES, TOO_MANY_GPUS


def gpus(text: str) -> list[tuple]:
    facts = csv.parse_nvidia_smi_csv(text)
    return [(g.name, g.compute_capability, g.driver_version, g.memory_mib) for g in facts.gpus]


@pytest.mark.parametrize(
    "name",
    ["NVIDIA H100 80GB HBM3", "Tesla T4", "A100", "a100x", "H1", "L40S", "GB20", "GB200-NVL"]
    + ["GH200"],
)
def test_gpu_names_are_recognised(name):
    assert csv.looks_like_gpu_name(name) is True


@pytest.mark.parametrize(
    "name", ["", "   ", "Intel Xeon", "GB2", "GB2000", "GBX00", "H1000", "Z100", "A", "Ax1"]
)
def test_other_words_are_not_gpu_names(name):
    assert csv.looks_like_gpu_name(name) is False


def test_a_full_headerless_row_is_read_column_by_column():
    assert gpus("NVIDIA H100 80GB HBM3, 9.0, 550.54.15, 81559 MiB\n") == [
        ("NVIDIA H100 80GB HBM3", "9.0", "550.54.15", 81559)
    ]
    facts = csv.parse_nvidia_smi_csv("H100, 9.0, 550.54.15\n")
    assert facts.driver_version == "550.54.15"
    assert (facts.os, facts.sources) == ("linux", [csv.SOURCE])


def test_memory_needs_three_digits_or_a_unit_and_at_most_nine_digits():
    assert gpus("H100, 9.0, 123\n") == [("H100", "9.0", "", 123)]
    assert gpus("H100, 9.0, 123456789 MiB\n") == [("H100", "9.0", "", 123456789)]
    # A two-digit number is no known column, a ten-digit one no plausible memory: not a GPU row.
    assert gpus("H100, 9.0, 12\n") == []
    assert gpus("H100, 9.0, 1234567890\n") == []


def test_a_driver_version_needs_a_three_digit_major():
    assert gpus("H100, 9.0, 55.54.15\n") == []


def test_headerless_rows_start_with_a_gpu_name_and_hold_each_column_once():
    assert gpus("9.0, H100\n") == []
    assert gpus("H100, 9.0, 8.0\n") == []
    assert gpus("Foo Bar, 9.0\n") == []
    assert gpus("H100, 9.0, 550.54.15, 81559 MiB, 7\n") == []


def test_a_header_names_the_columns_with_units_dropped():
    text = "gpu_name, memory.total [MiB], compute_cap\nNVIDIA L4, 23034 MiB, 8.9\n"
    assert gpus(text) == [("NVIDIA L4", "8.9", "", 23034)]


def test_rows_under_a_header_must_name_a_gpu_and_a_real_compute_capability():
    header = "name, compute_cap\n"
    assert gpus(header + "Intel Xeon, 9.0\n") == []
    assert gpus(header + "NVIDIA H100, nine\n") == []
    assert gpus(header + "NVIDIA H100, [N/A]\n") == [("NVIDIA H100", "", "", None)]


def test_a_row_of_another_width_than_the_header_is_read_without_it():
    assert gpus("name, compute_cap\nNVIDIA H100, 9.0, 550.54.15\n") == [
        ("NVIDIA H100", "9.0", "550.54.15", None)
    ]


def test_a_one_column_header_reads_single_values_as_rows():
    assert gpus("name\nNVIDIA H100 80GB HBM3\n") == [("NVIDIA H100 80GB HBM3", "", "", None)]


def test_compute_capabilities_alone_give_gpus_without_names():
    assert gpus("9.0\n9.0\n") == [("", "9.0", "", None), ("", "9.0", "", None)]


def test_bare_model_names_give_gpus_without_compute_capabilities():
    assert gpus("NVIDIA H100 80GB HBM3\nTesla T4\n") == [
        ("NVIDIA H100 80GB HBM3", "", "", None),
        ("Tesla T4", "", "", None),
    ]
    assert gpus("NVIDIA Frobnicator\n") == []


def test_names_and_compute_capabilities_pair_only_when_as_many():
    assert gpus("Tesla T4\nNVIDIA H100\n7.5\n9.0\n") == [
        ("Tesla T4", "7.5", "", None),
        ("NVIDIA H100", "9.0", "", None),
    ]
    facts = csv.parse_nvidia_smi_csv("Tesla T4\nNVIDIA H100\n7.5\n")
    assert [(g.name, g.compute_capability) for g in facts.gpus] == [
        ("Tesla T4", ""),
        ("NVIDIA H100", ""),
    ]
    assert facts.notes == [
        "2 GPU name(s) but 1 compute capabilities were pasted; they are not paired."
    ]


def test_lines_taken_by_another_parser_and_blank_lines_are_skipped():
    lines = ["H100, 9.0", "", "T4, 7.5"]
    facts, used = csv.parse(lines, {0})
    assert [g.name for g in facts.gpus] == ["T4"]
    assert used == {2}


def test_nothing_read_leaves_the_facts_unsourced():
    facts = csv.parse_nvidia_smi_csv("hello, world\n")
    assert (facts.gpus, facts.sources, facts.os) == ([], [], "")


def test_rows_apart_are_separate_blocks_and_adjacent_rows_one():
    # The same two GPUs with and without a header: merged, not four.
    two = "NVIDIA H100, 9.0\nNVIDIA H100, 9.0\n"
    same = "name, compute_cap\n" + two + "\n" + two
    assert len(gpus(same)) == 2
    # Two runs of different GPUs stay apart.
    apart = "Tesla T4, 7.5\nsome text\nNVIDIA H100, 9.0\nNVIDIA H100, 9.0\n"
    assert [g[0] for g in gpus(apart)] == ["Tesla T4", "NVIDIA H100", "NVIDIA H100"]


def test_too_many_gpu_lines_are_refused_once_the_limit_is_passed():
    at_limit = csv.parse_nvidia_smi_csv("H100, 9.0\n" * (MAX_GPU_LINES + 1))
    assert at_limit.errors == []
    over = csv.parse_nvidia_smi_csv("H100, 9.0\n" * (MAX_GPU_LINES + 5))
    # Reading stops at the first line past the limit: one error, no more rows read.
    assert over.errors == [TOO_MANY_GPUS]
    assert len(over.gpus) == MAX_GPU_LINES + 1

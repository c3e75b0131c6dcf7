"""The selector's narrowing engine (catalog/browse/selector_engine.py) on hand-made records: no
database."""

import pytest

from catalog.browse import selector_engine
from catalog.build_commands import variant_commands


def record(pname, *, branch="main", backend="cuda", sm="sm90", isa="avx512", cuda="12.8", **kw):
    arch = {"avx2": "x86_64", "avx512": "x86_64", "armv9": "aarch64"}.get(isa, "")
    platform = "aarch64-darwin" if backend == "mps" else f"{arch}-linux"
    gpu = {
        "sm90": ("Hopper", 90, "H100"),
        "sm61": ("Pascal", 61, "GTX 1080"),
        "sm110": ("Blackwell (Thor)", 110, "DRIVE Thor"),
    }.get(sm)
    base = {
        "pname": pname,
        "repository": "build-pytorch",
        "branch_name": branch,
        "preference": 10,
        "pytorch_version": "2.8.0",
        "library": "pytorch",
        "backend": backend,
        "platform": platform,
        "python": "3.13",
        "cuda": cuda if backend == "cuda" else "",
        "sm": sm if backend == "cuda" else None,
        "arch_number": gpu[1] if backend == "cuda" else None,
        "host_arch": ("aarch64" if sm == "sm110" else "") if backend == "cuda" else None,
        "gpu_name": gpu[0] if backend == "cuda" else None,
        "gpu_models": gpu[2] if backend == "cuda" else None,
        "isa": isa if backend != "mps" else None,
        "isa_label": isa.upper() if backend != "mps" else None,
        "isa_arch": arch or None,
        "isa_rank": 1,
    }
    return {**base, **kw}


ROWS = selector_engine.rows_from_records(
    [
        record("a-sm90-avx512"),
        record("a-sm90-avx2", isa="avx2"),
        record("a-sm61-avx512", sm="sm61"),
        record("b-sm90-avx512-cuda13", branch="cuda13", cuda="13.0"),
        record("c-cpu-armv9", backend="cpu", isa="armv9"),
        record("d-mps", backend="mps"),
    ]
)


def facet(result, key):
    return next(f for f in result.facets if f.dimension.key == key)


def option(result, key, value):
    return next(o for o in facet(result, key).options if o.value == value)


def test_dimensions_are_data_in_reading_order():
    assert [d.key for d in selector_engine.DIMENSIONS] == [
        "os",
        "arch",
        "gpu",
        "isa",
        "cuda",
        "python",
        "branch",
        "library",
    ]
    assert all(d.label for d in selector_engine.DIMENSIONS)


def test_nothing_chosen_counts_every_option():
    result = selector_engine.narrow(ROWS, {})
    assert len(result.matches) == 6 and result.unique is None
    assert option(result, "os", "linux").count == 5
    assert option(result, "os", "darwin").count == 1
    assert option(result, "gpu", "sm90").count == 3
    assert {o.value for o in facet(result, "gpu").options} == {"sm90", "sm61", "none", "mps"}
    assert all(not o.reason for f in result.facets for o in f.options)


def test_a_choice_narrows_the_other_dimensions_but_not_its_own():
    result = selector_engine.narrow(ROWS, {"gpu": "sm90"})
    assert len(result.matches) == 3
    # Its own row still counts alternatives, so switching GPU stays one click.
    assert option(result, "gpu", "sm61").count == 1
    assert option(result, "gpu", "sm90").selected
    assert option(result, "isa", "avx2").count == 1
    assert option(result, "os", "darwin").count == 0


def test_choices_narrow_to_one_variant():
    chosen = {"gpu": "sm90", "isa": "avx512", "cuda": "12.8"}
    result = selector_engine.narrow(ROWS, chosen)
    assert result.unique is not None and result.unique.pname == "a-sm90-avx512"
    assert result.unique.branch == "main" and result.unique.repository == "build-pytorch"


def test_impossible_options_name_the_choice_they_conflict_with():
    result = selector_engine.narrow(ROWS, {"gpu": "sm61"})
    cuda13 = option(result, "cuda", "13.0")
    assert cuda13.count == 0
    assert cuda13.reason == "No build for CUDA 13.0 with Pascal (SM61)"
    result = selector_engine.narrow(ROWS, {"cuda": "13.0"})
    assert option(result, "gpu", "sm61").reason == "No build for Pascal (SM61) with CUDA 13.0"


def test_conflicting_choices_match_nothing_and_stay_removable():
    result = selector_engine.narrow(ROWS, {"gpu": "sm61", "cuda": "13.0"})
    assert result.matches == [] and result.unique is None
    sm61 = option(result, "gpu", "sm61")
    assert sm61.selected and sm61.count == 0 and "CUDA 13.0" in sm61.reason
    assert sm61.query == "cuda=13.0"  # choosing it again drops it


def test_option_queries_keep_the_other_choices_in_dimension_order():
    result = selector_engine.narrow(ROWS, {"isa": "avx512", "gpu": "sm90"})
    assert result.query == "gpu=sm90&isa=avx512"
    assert option(result, "cuda", "12.8").query == "gpu=sm90&isa=avx512&cuda=12.8"
    assert option(result, "branch", "build-pytorch/cuda13").query == (
        "gpu=sm90&isa=avx512&branch=build-pytorch/cuda13"
    )


def test_branches_are_qualified_by_repository():
    values = [o.value for o in facet(selector_engine.narrow(ROWS, {}), "branch").options]
    assert values == ["build-pytorch/cuda13", "build-pytorch/main"]


def test_parse_choices_reads_one_known_value_per_dimension():
    params = {"gpu": ["sm90"], "isa": [""], "view": ["list"]}
    assert selector_engine.parse_choices(ROWS, params) == {"gpu": "sm90"}


@pytest.mark.parametrize(
    "params, message",
    [
        ({"gpu": ["sm99"]}, "There is no GPU 'sm99' in the catalogue"),
        ({"gpu": ["sm90", "sm61"]}, "Choose one GPU, not 2."),
        ({"os": ["windows"]}, "There is no operating system 'windows'"),
        ({"branch": ["nope"]}, "There is no PyTorch version / branch 'nope'"),
        ({"python": ["3" * 500]}, "…"),
    ],
)
def test_parse_choices_refuses_unknown_or_repeated_values(params, message):
    with pytest.raises(selector_engine.BadChoice) as exc:
        selector_engine.parse_choices(ROWS, params)
    assert message in str(exc.value)
    assert len(str(exc.value)) < 300


def test_commands_have_one_home_with_the_clone_url():
    commands = variant_commands("build-pytorch", "main", "pytorch-x")
    assert [key for key, _, _ in commands] == ["clone", "checkout", "build", "publish", "install"]
    assert commands[0][2].startswith("git clone https://github.com/barstoolbluz/build-pytorch\n")
    assert commands[1][1] == "Check out the branch"
    short = variant_commands("build-pytorch", "main", "pytorch-x", "acme", ("checkout", "install"))
    assert short[0][1] == "Check out the branch (in a clone of build-pytorch)"
    assert short[1] == ("install", "Install (after flox publish)", "flox install acme/pytorch-x")


@pytest.mark.parametrize(
    "chosen",
    [{}, {"gpu": "sm90"}, {"gpu": "sm90", "isa": "avx2"}, {"cuda": "13.0", "isa": "avx512"}],
)
def test_index_counts_match_counting_row_by_row(chosen):
    """Each option's count from the bitsets equals the rows that have it and every other
    dimension's choice, counted one by one."""
    index = selector_engine.index_rows(ROWS)
    result = selector_engine.narrow(index, chosen)
    for f in result.facets:
        key = f.dimension.key
        for o in f.options:
            expected = sum(
                1
                for row in ROWS
                if row.choices[key].value == o.value
                and all(row.choices[k].value == v for k, v in chosen.items() if k != key)
            )
            assert o.count == expected, (key, o.value)
    allowed = [r for r in ROWS if all(r.choices[k].value == v for k, v in chosen.items())]
    assert result.matches == allowed


def test_parse_choices_reads_older_branch_spellings():
    for written in ("build-pytorch:main", "main"):  # only one repository has main here
        chosen = selector_engine.parse_choices(ROWS, {"branch": [written]})
        assert chosen == {"branch": "build-pytorch/main"}


THOR = selector_engine.rows_from_records(
    [
        record("thor-armv9", sm="sm110", isa="armv9", cuda="13.0"),
        record("thor-avx2", sm="sm110", isa="avx2", cuda="13.0"),
        record("a-sm90-avx2", isa="avx2"),
    ]
)


def test_an_impossible_pairing_is_marked_and_never_the_answer():
    rows = {r.pname: r for r in THOR}
    assert rows["thor-avx2"].impossible == (
        "SM110 is built into an aarch64 system, so an x86_64 ISA (avx2) cannot run beside it."
    )
    assert rows["thor-armv9"].impossible == rows["a-sm90-avx2"].impossible == ""
    alone = selector_engine.narrow(THOR, {"gpu": "sm110", "isa": "avx2"})
    assert [r.pname for r in alone.matches] == ["thor-avx2"] and alone.unique is None
    assert selector_engine.narrow(THOR, {"gpu": "sm110", "isa": "armv9"}).unique.pname == (
        "thor-armv9"
    )
    # Still counted: the catalogue holds it.
    assert option(selector_engine.narrow(THOR, {"gpu": "sm110"}), "isa", "avx2").count == 1

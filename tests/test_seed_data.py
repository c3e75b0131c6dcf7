"""The loaded catalogue holds everything the seeds state."""

from pathlib import Path

import pytest
from django.core.management import call_command
from django.db.models import Count

from catalog.models import Branch, CpuIsa, DocPage, GpuArchitecture, GpuModel, SourceClaim, Variant
from catalog.seeding import expand_matrix, load_catalogue, read_toml

pytestmark = pytest.mark.django_db
DATA = Path(__file__).parent / "data" / "seed_names"

STATED_COUNTS = {
    ("build-pytorch", "main"): 62,
    ("build-pytorch", "pytorch-2.8-python312"): 62,
    ("build-pytorch", "pytorch-2.8-python311"): 62,
    ("build-pytorch", "pytorch-2.9-python313"): 66,
    ("build-pytorch", "pytorch-2.9-vllm-0.15.1"): 117,
    ("build-pytorch", "pytorch-2.9-vllm-0.14.0"): 131,
    ("build-pytorch", "pytorch-2.9-python311"): 131,
    ("build-pytorch", "pytorch-2.10-python313"): 68,
    ("build-torchvision", "main"): 44,
    ("build-torchvision", "cuda-12_9"): 57,
    ("build-torchvision", "cuda-13_0"): 12,
}
# What the catalogue derives: every stated count, cuda-13_0's eight impossible x86 pairings of
# SM110/SM121 included (kept as the repository holds them; claim
# torchvision-cuda-13-0-x86-pairings).
DERIVED_COUNTS = dict(STATED_COUNTS)
TOTAL = 812


def seed_names(filename):
    lines = (DATA / filename).read_text().splitlines()
    return {line for line in lines if line and not line.startswith("#")}


def test_variant_counts_per_branch_match_the_seeds():
    counts = {(b.repository, b.name): b.n for b in Branch.objects.annotate(n=Count("variants"))}
    assert counts == DERIVED_COUNTS
    assert Variant.objects.count() == sum(DERIVED_COUNTS.values()) == TOTAL
    assert all(
        b.stated_variant_count == STATED_COUNTS[(b.repository, b.name)]
        for b in Branch.objects.all()
    )


@pytest.mark.parametrize(
    "repository, branch, filename, expected",
    [
        ("build-pytorch", "main", "build-pytorch_main.txt", 62),
        ("build-torchvision", "cuda-12_9", "build-torchvision_cuda-12_9.txt", 57),
    ],
)
def test_every_name_the_seeds_list_exists_exactly(repository, branch, filename, expected):
    listed = seed_names(filename)
    assert len(listed) == expected
    stored = set(
        Variant.objects.filter(branch__repository=repository, branch__name=branch).values_list(
            "pname", flat=True
        )
    )
    assert stored == listed


def test_python_variants_of_main_mirror_main():
    main = {
        n.replace("python313", "")
        for n in Variant.objects.filter(
            branch__repository="build-pytorch", branch__name="main"
        ).values_list("pname", flat=True)
    }
    for name, tag in (
        ("pytorch-2.8-python312", "python312"),
        ("pytorch-2.8-python311", "python311"),
    ):
        other = {
            n.replace(tag, "")
            for n in Variant.objects.filter(branch__name=name).values_list("pname", flat=True)
        }
        assert other == main


def test_vllm_branches_build_sm103_on_cuda_12_9_only():
    for name in ("pytorch-2.9-vllm-0.15.1", "pytorch-2.9-vllm-0.14.0", "pytorch-2.9-python311"):
        cudas = set(
            Variant.objects.filter(branch__name=name, gpu_arch__sm="sm103").values_list(
                "cuda_version", flat=True
            )
        )
        assert cudas == {"12.9"}
        both = set(
            Variant.objects.filter(branch__name=name, gpu_arch__sm="sm90").values_list(
                "cuda_version", flat=True
            )
        )
        assert both == {"12.9", "12.8"}


def test_sm70_only_on_the_branches_that_build_it():
    branches = set(
        Variant.objects.filter(gpu_arch__sm="sm70").values_list("branch__name", flat=True)
    )
    assert branches == {"pytorch-2.9-vllm-0.14.0", "pytorch-2.9-python311"}


def test_architectures_isas_and_models():
    assert list(GpuArchitecture.objects.values_list("sm", flat=True)) == [
        "sm61",
        "sm70",
        "sm75",
        "sm80",
        "sm86",
        "sm89",
        "sm90",
        "sm100",
        "sm103",
        "sm110",
        "sm120",
        "sm121",
    ]
    sm121 = GpuArchitecture.objects.get(sm="sm121")
    assert (sm121.compute_capability, sm121.min_cuda, sm121.min_driver) == ("12.1", "12.9", 570)
    assert GpuModel.objects.get(name="RTX 4090").architecture.sm == "sm89"
    h100 = GpuModel.objects.get(name="H100")
    assert "NVIDIA H100 80GB HBM3" in h100.aliases and h100.architecture.sm == "sm90"
    assert set(CpuIsa.objects.values_list("slug", flat=True)) == {
        "avx",
        "avx2",
        "avx512",
        "avx512bf16",
        "avx512vnni",
        "armv8_2",
        "armv9",
    }
    avx512 = CpuIsa.objects.get(slug="avx512")
    assert avx512.compiler_flags == ["-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mfma"]
    assert CpuIsa.objects.get(slug="avx").disabled_libraries == ["fbgemm", "mkldnn", "nnpack"]


def test_branch_facts():
    main = Branch.objects.get(repository="build-pytorch", name="main")
    assert (main.pytorch_version, main.python_version, main.cuda_versions, main.is_default) == (
        "2.8.0",
        "3.13",
        ["12.8"],
        True,
    )
    assert main.nixpkgs_pin == "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3"
    vllm = Branch.objects.get(name="pytorch-2.9-vllm-0.14.0")
    assert (vllm.cuda_versions, vllm.cudnn_version, vllm.nixpkgs_pin, vllm.vllm_version) == (
        ["12.9", "12.8"],
        "9.13.0",
        "46336d4",
        "0.14.0",
    )
    tv = Branch.objects.get(repository="build-torchvision", name="cuda-12_9")
    assert (tv.torchvision_version, tv.pytorch_branch.name) == ("0.24.0", "pytorch-2.9-python313")


def test_recipe_inputs_follow_the_hardware_rules():
    sm61_avx = Variant.objects.get(
        branch__name="main",
        branch__repository="build-pytorch",
        pname="pytorch-python313-cuda12_8-sm61-avx",
    )
    assert sm61_avx.disabled_features == ["cudnn", "fbgemm", "mkldnn", "nnpack"]
    sm61_avx2 = Variant.objects.get(
        branch__name="main",
        branch__repository="build-pytorch",
        pname="pytorch-python313-cuda12_8-sm61-avx2",
    )
    assert sm61_avx2.disabled_features == ["cudnn"]
    assert (
        Variant.objects.get(
            branch__name="main",
            branch__repository="build-pytorch",
            pname="pytorch-python313-cuda12_8-sm90-avx512",
        ).disabled_features
        == []
    )
    mps = Variant.objects.get(pname="pytorch-python313-darwin-mps", branch__name="main")
    assert (mps.platform, mps.blas, mps.cpu_isa, mps.gpu_arch) == (
        "aarch64-darwin",
        "veclib",
        None,
        None,
    )


def test_companions_link_to_their_pytorch():
    companions = Variant.objects.exclude(library="pytorch").select_related(
        "depends_on", "branch", "depends_on__branch"
    )
    assert companions.count() == 12 + 44 + 57 + 12
    # The x86 pairings of SM110/SM121 run on no machine, so no PyTorch exists to name.
    impossible = [c for c in companions if c.impossible_pairing]
    assert sorted((c.gpu_arch.sm, c.cpu_isa.slug) for c in impossible) == sorted(
        (sm, isa)
        for sm in ("sm110", "sm121")
        for isa in ("avx2", "avx512", "avx512bf16", "avx512vnni")
    )
    assert all(c.depends_on is None for c in impossible)
    for c in (c for c in companions if not c.impossible_pairing):
        dep = c.depends_on
        assert dep.library == "pytorch"
        assert (dep.gpu_arch_id, dep.cpu_isa_id, dep.cuda_version, dep.python_version) == (
            c.gpu_arch_id,
            c.cpu_isa_id,
            c.cuda_version,
            c.python_version,
        )
        expected_branch = c.branch.pytorch_branch or c.branch
        assert dep.branch_id == expected_branch.id


def test_status_follows_the_seeds():
    assert set(
        Variant.objects.filter(branch__name="pytorch-2.10-python313").values_list(
            "status", flat=True
        )
    ) == {"planned"}
    assert set(
        Variant.objects.filter(
            branch__repository="build-torchvision", branch__name="cuda-13_0"
        ).values_list("status", flat=True)
    ) == {"planned"}
    assert set(
        Variant.objects.exclude(branch__nixpkgs_pin="").values_list("status", flat=True)
    ) == {"recipe"}


def test_docs_and_claims_are_loaded():
    assert DocPage.objects.exists()
    assert SourceClaim.objects.filter(acknowledged=True).count() >= 15


def snapshot():
    return {
        model.__name__: sorted(map(repr, model.objects.values_list()))
        for model in (Branch, CpuIsa, GpuArchitecture, GpuModel, Variant, SourceClaim, DocPage)
    }


def test_loading_the_fixtures_twice_changes_nothing():
    before = snapshot()
    report = load_catalogue()
    assert report.changed == 0
    assert snapshot() == before


def test_reloading_keeps_a_status_set_by_builds():
    v = Variant.objects.get(
        branch__name="main", branch__repository="build-pytorch", pname="pytorch-python313-cpu-avx2"
    )
    v.status = "built"
    v.save()
    load_catalogue()
    v.refresh_from_db()
    assert v.status == "built"


def test_load_command_reports_unchanged_rows(capsys):
    call_command("load-catalogue")
    out = capsys.readouterr().out
    assert f"Variant: 0 created, 0 updated, {Variant.objects.count()} unchanged" in out


def test_expand_matrix_rejects_duplicates_and_unknown_sets():
    from catalog.seeding import SeedError

    branch = {
        "repository": "r",
        "name": "b",
        "matrix": [
            {"library": "pytorch", "backend": "cpu", "isas": ["avx2"]},
            {"library": "pytorch", "backend": "cpu", "isas": ["avx2"]},
        ],
    }
    with pytest.raises(SeedError, match="more than once"):
        expand_matrix(branch, {}, {})
    with pytest.raises(SeedError, match="unknown ISA set"):
        expand_matrix(
            {
                "repository": "r",
                "name": "b",
                "matrix": [{"library": "pytorch", "backend": "cpu", "isas": "nope"}],
            },
            {},
            {},
        )


def test_every_branch_documents_its_derivation():
    data = read_toml(
        Path(__file__).resolve().parent.parent / "fixtures" / "catalogue" / "branches.toml"
    )
    assert all(spec.get("derivation", "").strip() for spec in data["branch"])
    assert all(b.derivation for b in Branch.objects.all())


def test_expand_matrix_rejects_groups_that_describe_nothing():
    from catalog.seeding import SeedError

    def branch(group):
        return {"repository": "r", "name": "b", "matrix": [group]}

    with pytest.raises(SeedError, match="unknown backend 'rocm'"):
        expand_matrix(branch({"library": "pytorch", "backend": "rocm"}), {}, {})
    with pytest.raises(SeedError, match="has no cuda"):
        expand_matrix(
            branch({"library": "pytorch", "backend": "cuda", "gpus": ["sm90"], "isas": ["avx2"]}),
            {},
            {},
        )
    with pytest.raises(SeedError, match="has no backend"):
        expand_matrix(branch({"library": "pytorch"}), {}, {})


@pytest.mark.parametrize(
    "filename, old, message",
    [
        (
            "architectures.toml",
            'sm = "sm61"\n',
            r"architectures.toml \[\[architecture\]\]: a record has no sm",
        ),
        (
            "architectures.toml",
            '{ name = "GTX 1070", ',
            r"architectures.toml sm61 models: a record has no name",
        ),
        ("isas.toml", 'slug = "avx"\n', r"isas.toml \[\[isa\]\]: a record has no slug"),
        (
            "branches.toml",
            'repository = "build-pytorch"\nname = "main"\n',
            r"branches.toml \[\[branch\]\]: a record has no repository, name",
        ),
        (
            "claims.toml",
            'key = "vnni-on-skylake-sp"\n',
            r"claims.toml \[\[claim\]\]: a record has no key",
        ),
    ],
)
def test_load_command_names_a_missing_key_in_one_sentence(tmp_path, filename, old, message):
    import shutil

    from django.core.management import CommandError

    fixtures = tmp_path / "fixtures"
    shutil.copytree(Path(__file__).resolve().parent.parent / "fixtures", fixtures)
    path = fixtures / "catalogue" / filename
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, "{ " if old.startswith("{ ") else "", 1), encoding="utf-8")
    with pytest.raises(CommandError, match="^Nothing was loaded: " + message):
        call_command("load-catalogue", fixtures=str(fixtures))


# Where the catalogue's wording deliberately differs from a seed's, a recorded claim says why.
USE_CASE_CORRECTIONS = {
    "H100/L40S": ("H100/H200", "l40s-is-sm90"),
    "ARM Grace, Graviton3+, modern ARM": (
        "ARM Grace, Graviton4, modern ARM with SVE2",
        "armv9-on-graviton3",
    ),
}


def test_use_cases_are_the_seeds_words_or_a_recorded_correction():
    rows = [
        line.split("\t")
        for line in (DATA / "use_cases.tsv").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert (
        len(rows) == 62 - 4 + 57
    )  # main's matrix (the companion table has no use case) and cuda-12_9
    corrected = set()
    for repository, branch, pname, seed_text in rows:
        expected = seed_text
        for seed_words, (ours, claim) in USE_CASE_CORRECTIONS.items():
            if seed_words in seed_text:
                expected = seed_text.replace(seed_words, ours)
                corrected.add(claim)
        variant = Variant.objects.get(
            branch__repository=repository, branch__name=branch, pname=pname
        )
        assert variant.use_case == expected, pname
    assert (
        set(
            SourceClaim.objects.filter(key__in=corrected, acknowledged=True).values_list(
                "key", flat=True
            )
        )
        == corrected
    )


def test_use_case_overrides_must_name_isas_of_their_group():
    from catalog.seeding import SeedError

    branch = {
        "repository": "r",
        "name": "b",
        "matrix": [
            {
                "library": "pytorch",
                "backend": "cpu",
                "isas": ["avx2"],
                "use_cases": {"avx512": "x"},
            },
        ],
    }
    with pytest.raises(SeedError, match="use_cases names ISAs the group does not build: avx512"):
        expand_matrix(branch, {}, {})
    branch["matrix"][0]["use_cases"] = {"avx2": "Seed wording"}
    assert [s.use_case for s in expand_matrix(branch, {}, {})] == ["Seed wording"]

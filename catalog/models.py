"""The catalogue's data.

Validation lives here (`clean`), so the admin, the seed loader and `import-recipes` all enforce
the same rules. Names are composed and parsed only by `catalog.naming`.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.db import models
from django.urls import reverse

from catalog import hardware, lint, naming, vocabulary
from catalog.wizard import cpus

REPOSITORIES = vocabulary.choices(vocabulary.REPOSITORIES)
# Which libraries a repository's recipes build.
REPOSITORY_LIBRARIES = {key: set(r.libraries) for key, r in vocabulary.REPOSITORIES.items()}
# Pages name the companion libraries by their package names.
LIBRARIES = [
    (key, lib.label if key == "pytorch" else key) for key, lib in vocabulary.LIBRARIES.items()
]
BACKENDS = vocabulary.choices(vocabulary.BACKENDS)
PLATFORMS = vocabulary.choices(vocabulary.PLATFORMS)
CPU_ARCHES = vocabulary.choices(vocabulary.CPU_ARCHES)
BLAS_CHOICES = vocabulary.choices(vocabulary.BLAS)
BACKEND_BLAS = {key: set(b.blas) for key, b in vocabulary.BACKENDS.items()}
ORIGINS = [("seeded", "Seeded"), ("imported", "Imported")]
STATUSES = vocabulary.choices(vocabulary.STATUSES)
# Libraries a recipe can switch off; each ISA / architecture rule names the ones it needs off.
DISABLEABLE_FEATURES = tuple(vocabulary.FEATURES)
# cuDNN 9.11 dropped GPUs below compute capability 7.5 (seeds: SM61 notes).
CUDNN_DROPS_PRE_TURING_FROM = (9, 11)
CUDNN_MIN_COMPUTE_CAPABILITY = (7, 5)
# Sizes in bytes are bounded (1 PiB), so a typo cannot store a number no page can show.
MAX_BYTES = 2**50


class SafeNames:
    """Refuses names that are not safe as paths (naming.SAFE_NAME): in full_clean, so the admin,
    the loader and the importer show it beside the field, and in save, so no ORM write stores
    one either."""

    safe_name_fields: tuple[str, ...] = ()

    def _name_errors(self, exclude=()) -> dict[str, list[str]]:
        errors: dict[str, list[str]] = {}
        for name in self.safe_name_fields:
            reason = "" if name in exclude else naming.unsafe_name_reason(getattr(self, name))
            if reason:
                errors[name] = [reason]
        return errors

    def clean_fields(self, exclude=None) -> None:
        errors = self._name_errors(exclude or ())
        try:
            super().clean_fields(exclude)
        except ValidationError as exc:
            errors = exc.update_error_dict(errors)
        if errors:
            raise ValidationError(errors)

    def save(self, *args, **kwargs) -> None:
        errors = self._name_errors()
        if errors:
            raise ValidationError(errors)
        super().save(*args, **kwargs)


def _list_of_strings(value, field):
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValidationError({field: "Enter a list of non-empty strings."})


class GpuArchitecture(models.Model):
    sm = models.SlugField("SM", max_length=8, unique=True, help_text="e.g. sm90")
    arch_number = models.PositiveSmallIntegerField(
        editable=False, help_text="90 for sm90: gpuArchNum in the recipes; orders the list"
    )
    compute_capability = models.CharField(max_length=5, help_text='e.g. "9.0"')
    name = models.CharField("family name", max_length=60, help_text='e.g. "Hopper"')
    label = models.CharField(max_length=60, help_text='matrix row label, e.g. "Ampere DC"')
    description = models.CharField(
        max_length=120, help_text='recipe description, e.g. "NVIDIA Hopper (H100, L40S)"'
    )
    short_models = models.CharField(
        max_length=60, help_text='models in variant use cases, e.g. "H100/L40S"'
    )
    min_driver = models.PositiveIntegerField(help_text="minimum NVIDIA driver major version")
    min_cuda = models.CharField("minimum CUDA", max_length=10)
    max_cuda = models.CharField(
        "last CUDA", max_length=10, blank=True, help_text="newest CUDA that still targets it"
    )
    host_arch = models.CharField(
        "host CPU architecture",
        max_length=10,
        choices=CPU_ARCHES,
        blank=True,
        help_text="the CPU of the system the GPU is built into (DRIVE Thor, DGX Spark); "
        "blank: any host",
    )
    features = models.TextField(blank=True)
    notes = models.TextField(blank=True)

    class Meta:
        ordering = ["arch_number"]
        verbose_name = "GPU architecture"

    def __str__(self):
        return f"{self.sm.upper()} ({self.name})"

    def save(self, *args: object, **kwargs: object) -> None:
        self.arch_number = int(naming.sm_number(self.sm))
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("catalog:architecture", args=[self.sm])

    @property
    def cc_tuple(self) -> tuple[int, ...]:
        return naming.version_key(self.compute_capability)

    @property
    def needs_cudnn_off(self) -> bool:
        return self.cc_tuple < CUDNN_MIN_COMPUTE_CAPABILITY

    def supports_cuda(self, cuda_version: str) -> bool:
        v = naming.version_key(cuda_version)[:2]
        if v < naming.version_key(self.min_cuda)[:2]:
            return False
        return not (self.max_cuda and v > naming.version_key(self.max_cuda)[:2])

    def clean(self) -> None:
        try:
            number = naming.sm_number(self.sm)
        except naming.InvalidName as exc:
            raise ValidationError({"sm": str(exc)}) from exc
        self.arch_number = int(number)
        if naming.compute_capability_from_sm(self.sm) != self.compute_capability:
            raise ValidationError(
                {
                    "compute_capability": f"{self.sm} is compute capability "
                    f"{naming.compute_capability_from_sm(self.sm)}, not {self.compute_capability}."
                }
            )
        for field in ("min_cuda", "max_cuda"):
            value = getattr(self, field)
            if value and len(naming.version_key(value)) < 2:
                raise ValidationError({field: f"{value!r} is not a CUDA version like 12.8."})


class GpuModel(models.Model):
    name = models.CharField(max_length=80, unique=True, help_text='e.g. "H100"')
    aliases = models.JSONField(
        default=list, blank=True, help_text='other spellings, e.g. ["NVIDIA H100 80GB HBM3"]'
    )
    architecture = models.ForeignKey(
        GpuArchitecture, on_delete=models.CASCADE, related_name="models"
    )
    segment = models.CharField(max_length=40, blank=True, help_text="Consumer, Datacenter, …")

    class Meta:
        ordering = ["architecture__arch_number", "name"]
        verbose_name = "GPU model"

    def __str__(self):
        return self.name

    def clean(self) -> None:
        _list_of_strings(self.aliases, "aliases")


class CpuIsa(models.Model):
    slug = models.SlugField(max_length=20, unique=True)
    label = models.CharField(max_length=30, help_text='e.g. "AVX-512 BF16"')
    description = models.CharField(
        max_length=60, help_text='recipe description, e.g. "AVX-512 with BF16"'
    )
    arch = models.CharField(max_length=10, choices=CPU_ARCHES)
    rank = models.PositiveSmallIntegerField(
        default=0, help_text="order within its architecture, oldest hardware first"
    )
    compiler_flags = models.JSONField(default=list, help_text="as in the recipes' cpuFlags")
    required_features = models.JSONField(
        default=list, help_text="CPU feature names (/proc/cpuinfo) a machine needs to run it"
    )
    hardware = models.TextField(blank=True)
    use_for = models.TextField(blank=True)
    not_for = models.TextField(blank=True)
    choose_when = models.TextField(blank=True)
    detection = models.TextField(blank=True)
    disabled_libraries = models.JSONField(
        default=list, blank=True, help_text="libraries its recipes switch off, e.g. fbgemm"
    )
    cpu_use_case = models.CharField(
        max_length=80, blank=True, help_text="use case of its CPU-only variants"
    )
    gpu_pairing = models.CharField(
        max_length=60, blank=True, help_text='how GPU variants describe it, e.g. "INT8 inference"'
    )

    class Meta:
        ordering = ["arch", "rank"]
        verbose_name = "CPU ISA"

    def __str__(self):
        return self.label

    def get_absolute_url(self) -> str:
        return reverse("catalog:isa", args=[self.slug])

    @property
    def linux_platform(self) -> str:
        return f"{self.arch}-linux"

    @property
    def generations(self) -> str:
        """The CPU generations archspec lists with every required feature (clean() checks that
        they cover the compiler flags' needs)."""
        return cpus.generations_with(self.required_features or (), self.arch)

    def clean(self) -> None:
        _list_of_strings(self.compiler_flags, "compiler_flags")
        _list_of_strings(self.required_features, "required_features")
        if not isinstance(self.disabled_libraries, list) or not set(self.disabled_libraries) <= set(
            DISABLEABLE_FEATURES
        ):
            raise ValidationError(
                {"disabled_libraries": f"Choose from {', '.join(DISABLEABLE_FEATURES)}."}
            )
        try:
            needed = hardware.features_required_by(self.compiler_flags)
        except hardware.UnknownFlag as exc:
            raise ValidationError({"compiler_flags": str(exc)}) from exc
        missing = needed - set(self.required_features)
        if missing:
            raise ValidationError(
                {
                    "required_features": "The compiler flags need "
                    f"{', '.join(sorted(missing))}; list every feature the flags require."
                }
            )


class Branch(SafeNames, models.Model):
    safe_name_fields = ("repository", "name")
    repository = models.CharField(max_length=40, choices=REPOSITORIES)
    name = models.CharField(max_length=60)
    pytorch_version = models.CharField("PyTorch", max_length=20)
    torchvision_version = models.CharField("torchvision", max_length=20, blank=True)
    python_version = models.CharField("Python", max_length=6)
    vllm_version = models.CharField(
        "vLLM", max_length=20, blank=True, help_text="the vLLM release whose nixpkgs pin it shares"
    )
    cuda_versions = models.JSONField(
        "CUDA",
        default=list,
        help_text='as the seeds state them, newest first, e.g. ["12.9", "12.8"]',
    )
    cudnn_version = models.CharField("cuDNN", max_length=20, blank=True)
    min_driver = models.PositiveIntegerField(null=True, blank=True)
    nixpkgs_pin = models.CharField(
        max_length=40, blank=True, help_text="nixpkgs commit (full where known); empty = TBD"
    )
    purpose = models.TextField(blank=True)
    key_additions = models.CharField(max_length=200, blank=True)
    is_default = models.BooleanField(default=False)
    is_recommended = models.BooleanField(
        default=False,
        help_text="recommended for general use; the wizard offers it first otherwise",
    )
    preference = models.PositiveSmallIntegerField(
        default=50, help_text="lower = preferred when several branches fit"
    )
    pytorch_branch = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="companion_branches",
        help_text="for build-torchvision: the build-pytorch branch its PyTorch matches",
    )
    stated_variant_count = models.PositiveIntegerField(null=True, blank=True)
    default_status = models.CharField(
        max_length=10,
        choices=STATUSES,
        default="recipe",
        help_text="status of newly seeded variants",
    )
    derivation = models.TextField(
        blank=True, help_text="how the variant list follows from what the seeds state"
    )
    # Set by import-recipes: the commit the branch's recipes were read from, and when.
    source_commit = models.CharField(max_length=40, blank=True)
    imported_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["repository", "preference", "name"]
        verbose_name_plural = "branches"
        constraints = [
            models.UniqueConstraint(fields=["repository", "name"], name="branch_unique_per_repo")
        ]

    def __str__(self):
        return f"{self.repository}:{self.name}"

    def get_absolute_url(self) -> str:
        return reverse("catalog:branch", args=[self.repository, self.name])

    @property
    def is_imported(self) -> bool:
        """Read from a build repository by import-recipes (rather than seeded)."""
        return self.imported_at is not None

    @property
    def cuda_major_minors(self) -> list[str]:
        return [naming.cuda_major_minor(v) for v in self.cuda_versions]

    @property
    def nixpkgs_url(self) -> str:
        if not self.nixpkgs_pin:
            return ""
        return f"https://github.com/NixOS/nixpkgs/tree/{self.nixpkgs_pin}"

    @property
    def cudnn_drops_pre_turing(self) -> bool:
        """Whether this branch's cuDNN no longer supports compute capability < 7.5.

        "9.x" and "TBD" are treated as current cuDNN, i.e. without pre-Turing support."""
        key = naming.version_key(self.cudnn_version)
        return len(key) < 2 or key[:2] >= CUDNN_DROPS_PRE_TURING_FROM

    def clean(self) -> None:
        if not isinstance(self.cuda_versions, list) or not self.cuda_versions:
            raise ValidationError({"cuda_versions": "List at least one CUDA version."})
        for version in self.cuda_versions:
            if len(naming.version_key(version)) < 2:
                raise ValidationError({"cuda_versions": f"{version!r} is not a CUDA version."})
        if len(naming.version_key(self.python_version)) != 2:
            raise ValidationError({"python_version": "Enter a Python version like 3.13."})
        if self.pytorch_branch_id and self.pytorch_branch.repository != "build-pytorch":
            raise ValidationError({"pytorch_branch": "Choose a build-pytorch branch."})


class Variant(SafeNames, models.Model):
    safe_name_fields = ("pname",)
    pname = models.CharField(max_length=120, help_text="composed from the fields below")
    branch = models.ForeignKey(Branch, on_delete=models.CASCADE, related_name="variants")
    library = models.CharField(max_length=20, choices=LIBRARIES)
    backend = models.CharField(max_length=10, choices=BACKENDS)
    cuda_version = models.CharField("CUDA", max_length=10, blank=True)
    gpu_arch = models.ForeignKey(
        GpuArchitecture, null=True, blank=True, on_delete=models.PROTECT, related_name="variants"
    )
    cpu_isa = models.ForeignKey(
        CpuIsa, null=True, blank=True, on_delete=models.PROTECT, related_name="variants"
    )
    platform = models.CharField(max_length=20, choices=PLATFORMS)
    python_version = models.CharField("Python", max_length=6)
    blas = models.CharField("BLAS", max_length=10, choices=BLAS_CHOICES)
    status = models.CharField(max_length=10, choices=STATUSES, default="recipe")
    depends_on = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="companions",
        help_text="the PyTorch variant a torchvision/torchaudio variant is built against",
    )
    use_case = models.CharField(max_length=120, blank=True)
    notes = models.TextField(blank=True)
    disabled_features = models.JSONField(
        default=list,
        blank=True,
        help_text=f"switched off in the recipe: {', '.join(DISABLEABLE_FEATURES)}",
    )
    extra_cmake_flags = models.JSONField(default=list, blank=True)
    metadata_rev = models.PositiveIntegerField(
        null=True,
        blank=True,
        default=1,
        help_text="the .metadata-rev marker; bump it for metadata-only changes; empty = none",
    )
    # Where the variant came from. An imported variant keeps its recipe as the repository has
    # it (text and the facts read from it), so exporting it unchanged writes that text back and
    # a changed field becomes an in-place edit of that text.
    origin = models.CharField(max_length=10, choices=ORIGINS, default="seeded")
    recipe_form = models.CharField(max_length=30, blank=True, help_text="how its recipe is written")
    recipe_path = models.CharField(
        max_length=255, blank=True, help_text='in the checkout, e.g. ".flox/pkgs/<file>.nix"'
    )
    recipe_text = models.TextField(blank=True, help_text="the imported recipe, byte for byte")
    recipe_facts = models.JSONField(
        default=dict, blank=True, help_text="what the imported recipe said, as read"
    )
    # Values as the recipe writes them; empty on a seeded variant (derived from the fields above).
    nixpkgs_pin = models.CharField(
        max_length=40, blank=True, help_text="this recipe's nixpkgs commit; empty = the branch's"
    )
    cuda_packages_attr = models.CharField(
        "CUDA package set", max_length=40, blank=True, help_text='e.g. "cudaPackages_12_8"'
    )
    python_attr = models.CharField(
        "Python package set", max_length=30, blank=True, help_text='e.g. "python3Packages"'
    )
    gpu_targets = models.JSONField(
        default=list, blank=True, help_text='gpuTargets as written, e.g. ["9.0"]'
    )
    cpu_flags = models.JSONField(
        default=list, blank=True, help_text='cpuFlags as written, e.g. ["-mavx2", "-mfma"]'
    )
    platforms = models.JSONField(default=list, blank=True, help_text="meta.platforms as written")
    torch_version_override = models.CharField(
        max_length=20, blank=True, help_text="the torch source override's version, if any"
    )
    passthru = models.JSONField(default=dict, blank=True, help_text="literal passthru fields")

    class Meta:
        ordering = ["branch__repository", "branch__preference", "library", "pname"]
        constraints = [
            models.UniqueConstraint(fields=["branch", "pname"], name="variant_unique_per_branch"),
        ]
        indexes = [models.Index(fields=["status"]), models.Index(fields=["pname"])]

    def __str__(self):
        return self.pname

    def get_absolute_url(self) -> str:
        return reverse(
            "catalog:variant", args=[self.branch.repository, self.branch.name, self.pname]
        )

    def composed_pname(self) -> str:
        return naming.compose(
            self.library,
            self.python_version,
            self.backend,
            self.cuda_version,
            self.gpu_arch.sm if self.gpu_arch_id else "",
            self.cpu_isa.slug if self.cpu_isa_id else "",
        )

    @property
    def impossible_pairing(self) -> str:
        """Why no machine runs this variant ("" when one can): a GPU built into a system whose
        CPU is not the ISA's architecture (catalog/lint.py)."""
        if self.backend != "cuda" or not self.gpu_arch_id or not self.cpu_isa_id:
            return ""
        return lint.impossible_pairing(self.gpu_arch.sm, self.gpu_arch.host_arch, self.cpu_isa.slug)

    def required_disabled_features(self) -> set[str]:
        """What the hardware rules force off: the ISA's list, and cuDNN below SM75."""
        needed = set(self.cpu_isa.disabled_libraries) if self.cpu_isa_id else set()
        if (
            self.backend == "cuda"
            and self.gpu_arch_id
            and self.gpu_arch.needs_cudnn_off
            and self.branch.cudnn_drops_pre_turing
        ):
            needed.add("cudnn")
        return needed

    def clean(self) -> None:
        errors = {}

        def err(field: str, message: str) -> None:
            errors.setdefault(field, []).append(message)

        if not self.branch_id:
            raise ValidationError({"branch": "Choose a branch."})
        if self.origin == "imported":
            # An imported variant is what its repository holds; its inconsistencies are the
            # audit's findings (catalog/lint.py), not reasons to refuse it.
            return
        branch = self.branch
        self._clean_branch(err, branch)
        self._clean_shape(err)
        self._clean_platform(err)
        self._clean_cuda(err, branch)
        self._clean_features(err, errors)
        self._clean_dependency(err)
        if not errors:
            self._clean_name(err)
        if errors:
            raise ValidationError(errors)

    def _clean_branch(self, err, branch):
        """The branch's repository builds the library, in the branch's Python."""
        if self.library not in REPOSITORY_LIBRARIES.get(branch.repository, set()):
            err("library", f"{branch.repository} does not build {self.library}.")
        if self.python_version != branch.python_version:
            err(
                "python_version",
                f"{branch} builds Python {branch.python_version}, not {self.python_version}.",
            )

    def _clean_shape(self, err):
        """Which of architecture / ISA / CUDA the backend has."""
        # Backend shape: which of architecture / ISA / CUDA a variant has.
        if self.backend == "cuda":
            if not self.gpu_arch_id:
                err("gpu_arch", "A CUDA variant needs a GPU architecture.")
            if not self.cpu_isa_id:
                err("cpu_isa", "A CUDA variant needs a CPU ISA.")
            if not self.cuda_version:
                err("cuda_version", "A CUDA variant needs a CUDA version.")
        else:
            if self.gpu_arch_id:
                err("gpu_arch", f"A {self.get_backend_display()} variant has no GPU architecture.")
            if self.cuda_version:
                err("cuda_version", f"A {self.get_backend_display()} variant has no CUDA version.")
            if self.backend == "cpu" and not self.cpu_isa_id:
                err("cpu_isa", "A CPU-only variant needs a CPU ISA.")
            if self.backend == "mps" and self.cpu_isa_id:
                err("cpu_isa", "The Apple MPS variant has no CPU ISA.")

    def _clean_platform(self, err):
        """Platform follows the ISA (or MPS); the BLAS fits the backend."""
        # Platform follows the ISA (or MPS).
        if self.backend == "mps":
            if self.platform != "aarch64-darwin":
                err("platform", "MPS variants run only on aarch64-darwin.")
        elif self.cpu_isa_id and self.platform != self.cpu_isa.linux_platform:
            err(
                "platform",
                f"{self.cpu_isa.label} is an {self.cpu_isa.arch} ISA, so the platform must be "
                f"{self.cpu_isa.linux_platform}, not {self.platform}.",
            )

        if self.blas and self.blas not in BACKEND_BLAS.get(self.backend, set()):
            err(
                "blas",
                f"{self.get_blas_display()} is not a BLAS for {self.get_backend_display()} builds.",
            )

    def _clean_cuda(self, err, branch):
        """The CUDA version is the branch's and can target the architecture."""
        # CUDA: one of the branch's versions, and one that can target the architecture.
        if self.backend == "cuda" and self.cuda_version:
            if len(naming.version_key(self.cuda_version)) != 2:
                err("cuda_version", "Enter the CUDA version as MAJOR.MINOR, e.g. 12.8.")
            else:
                if self.cuda_version not in branch.cuda_major_minors:
                    err(
                        "cuda_version",
                        f"{branch} builds CUDA {', '.join(branch.cuda_versions)}, "
                        f"not {self.cuda_version}.",
                    )
                if self.gpu_arch_id and not self.gpu_arch.supports_cuda(self.cuda_version):
                    arch = self.gpu_arch
                    limit = f"needs CUDA ≥ {arch.min_cuda}"
                    if arch.max_cuda:
                        limit += f" and ≤ {arch.max_cuda}"
                    err(
                        "cuda_version",
                        f"{arch.sm.upper()} {limit}; CUDA {self.cuda_version} cannot build it.",
                    )

    def _clean_features(self, err, errors):
        """Known features, and every one the hardware rules force off."""
        features = self.disabled_features
        if not isinstance(features, list) or not set(features) <= set(DISABLEABLE_FEATURES):
            err("disabled_features", f"Choose from {', '.join(DISABLEABLE_FEATURES)}.")
        elif not errors.get("gpu_arch") and not errors.get("cpu_isa"):
            missing = self.required_disabled_features() - set(features)
            if missing:
                err(
                    "disabled_features",
                    "The hardware rules require these switched off: "
                    f"{', '.join(sorted(missing))} (cuDNN ≥ 9.11 has no SM < 7.5 support; "
                    "FBGEMM, MKLDNN and NNPACK need AVX2).",
                )
        if not isinstance(self.extra_cmake_flags, list):
            err("extra_cmake_flags", "Enter a list of flags.")

    def _clean_dependency(self, err):
        """A companion names a matching PyTorch; a PyTorch variant depends on nothing."""
        # Companions link to the PyTorch they are built against.
        if self.library == "pytorch":
            if self.depends_on_id:
                err("depends_on", "A PyTorch variant does not depend on another variant.")
        elif not self.depends_on_id:
            if self.impossible_pairing:
                # Its PyTorch cannot exist for the same reason; the audit reports both.
                return
            err(
                "depends_on",
                f"A {self.library} variant must name the PyTorch variant it is built against.",
            )
        else:
            dep = self.depends_on
            if dep.library != "pytorch":
                err("depends_on", f"{dep.pname} is not a PyTorch variant.")
            mismatched = [
                label
                for label, mine, theirs in (
                    ("backend", self.backend, dep.backend),
                    ("GPU architecture", self.gpu_arch_id, dep.gpu_arch_id),
                    ("CPU ISA", self.cpu_isa_id, dep.cpu_isa_id),
                    ("CUDA version", self.cuda_version, dep.cuda_version),
                    ("Python version", self.python_version, dep.python_version),
                )
                if mine != theirs
            ]
            if mismatched:
                err(
                    "depends_on",
                    f"{dep.pname} differs in {', '.join(mismatched)}; "
                    "a companion must match its PyTorch.",
                )

    def _clean_name(self, err):
        """The pname is what the fields compose."""
        try:
            expected = self.composed_pname()
        except naming.InvalidName as exc:
            err("pname", str(exc))
        else:
            if self.pname != expected:
                err("pname", f"The fields compose the name {expected!r}, not {self.pname!r}.")


class BuildRecord(models.Model):
    STATUSES = [(k, label) for k, label in STATUSES if k in vocabulary.BUILD_STATUSES]
    variant = models.ForeignKey(Variant, on_delete=models.CASCADE, related_name="builds")
    status = models.CharField(max_length=10, choices=STATUSES)
    started_at = models.DateTimeField()
    duration_seconds = models.PositiveIntegerField(null=True, blank=True)
    host = models.CharField(max_length=120, blank=True)
    commit = models.CharField(max_length=40, blank=True)
    log_url = models.URLField(blank=True)
    # What the build produced and where it went (outputs: BuildOutput rows).
    system = models.CharField(max_length=20, blank=True, choices=PLATFORMS)
    nixpkgs_rev = models.CharField(max_length=40, blank=True, help_text="nixpkgs commit built on")
    nar_size = models.PositiveBigIntegerField(
        null=True, blank=True, validators=[MaxValueValidator(MAX_BYTES)], help_text="bytes"
    )
    closure_size = models.PositiveBigIntegerField(
        null=True, blank=True, validators=[MaxValueValidator(MAX_BYTES)], help_text="bytes"
    )
    flox_catalog = models.CharField(
        max_length=80, blank=True, help_text="Flox catalog organisation it was published to"
    )
    flox_package = models.CharField(max_length=120, blank=True)
    flox_version = models.CharField(max_length=80, blank=True)
    published_cache_url = models.URLField(blank=True, help_text="binary cache it was pushed to")

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["variant", "-started_at"])]

    def __str__(self):
        return f"{self.variant.pname} {self.status} {self.started_at:%Y-%m-%d %H:%M}"

    def clean(self):
        errors = {}
        if self.nixpkgs_rev and not naming.GIT_HASH_RE.fullmatch(self.nixpkgs_rev):
            errors["nixpkgs_rev"] = "The nixpkgs revision must be a git hash (4 to 40 hex digits)."
        for name in ("flox_catalog", "flox_package", "flox_version"):
            value = getattr(self, name)
            if value and (reason := naming.unsafe_name_reason(value)):
                errors[name] = reason
        if (self.flox_package or self.flox_version) and not self.flox_catalog:
            errors["flox_catalog"] = "Name the Flox catalog organisation the package went to."
        if errors:
            raise ValidationError(errors)


class BuildOutput(models.Model):
    """One Nix store path a build produced (a build can have several outputs)."""

    build = models.ForeignKey(BuildRecord, on_delete=models.CASCADE, related_name="outputs")
    store_path = models.CharField(max_length=260)

    class Meta:
        ordering = ["build", "store_path"]
        constraints = [
            models.UniqueConstraint(fields=["build", "store_path"], name="unique_build_output")
        ]

    def __str__(self):
        return self.store_path

    def clean(self):
        try:
            naming.parse_store_path(self.store_path)
        except naming.InvalidName as exc:
            raise ValidationError({"store_path": str(exc)}) from None

    @property
    def store_hash(self) -> str:
        return naming.parse_store_path(self.store_path).hash


class BinaryCache(models.Model):
    """A Nix binary cache that `check-caches` asks; configured in settings or the admin."""

    name = models.SlugField(max_length=60, unique=True)
    url = models.URLField(unique=True, help_text="e.g. https://cache.example.org")
    # Nix's convention: a lower priority number is preferred.
    priority = models.PositiveSmallIntegerField(default=50)
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["priority", "name"]
        verbose_name_plural = "binary caches"

    def __str__(self):
        return self.name

    def clean(self):
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValidationError({"url": "A binary cache URL must be http:// or https://."})


class CacheEntry(models.Model):
    """The last answer a binary cache gave for one output.

    `present`, the sizes and `checked_at` are the last definitive answer (200 or 404); a check
    that failed (timeout, 5xx, garbled narinfo) only sets `error` and `error_at`, so pages keep
    showing the last known state with its age."""

    output = models.ForeignKey(BuildOutput, on_delete=models.CASCADE, related_name="cache_entries")
    cache = models.ForeignKey(BinaryCache, on_delete=models.CASCADE, related_name="entries")
    present = models.BooleanField(null=True)
    file_size = models.PositiveBigIntegerField(null=True, blank=True)
    nar_size = models.PositiveBigIntegerField(null=True, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    present_since = models.DateTimeField(null=True, blank=True, help_text="first seen present")
    error = models.CharField(max_length=200, blank=True)
    error_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["output", "cache"], name="unique_cache_entry")
        ]
        verbose_name_plural = "cache entries"

    def __str__(self):
        return f"{self.output} in {self.cache}: {self.present}"


class DocPage(models.Model):
    slug = models.SlugField(max_length=60, unique=True)
    title = models.CharField(max_length=120)
    summary = models.CharField(max_length=240, blank=True)
    body = models.TextField(help_text="Markdown")
    order = models.PositiveSmallIntegerField(default=100)
    sources = models.CharField(max_length=200, blank=True, help_text="seed documents it draws on")

    class Meta:
        ordering = ["order", "slug"]
        verbose_name = "doc page"

    def __str__(self):
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("catalog:doc", args=[self.slug])


class SourceClaim(models.Model):
    """Something a seed document states that the catalogue can check, or a known contradiction.

    The audit evaluates each claim against the catalogue; a claim that does not hold is a
    finding. `acknowledged` marks a finding as known and recorded (with its resolution)."""

    KINDS = [
        ("cpu-generation", "CPU generation has the ISA's features"),
        ("architecture", "GPU architecture field"),
        ("gpu-model", "GPU model's architecture"),
        ("count", "branch variant count"),
        ("name", "package name exists"),
        ("isa-slug", "ISA slug"),
        ("isa-flags", "ISA compiler flags"),
        ("statement", "contradiction between statements"),
        ("impossible-pairing", "pairings no machine runs"),
    ]
    key = models.SlugField(max_length=80, unique=True)
    kind = models.CharField(max_length=20, choices=KINDS)
    subject = models.CharField(max_length=80, help_text='e.g. "isa:armv9", "arch:sm121"')
    statement = models.TextField(help_text="what the source says")
    source = models.CharField(max_length=200, help_text="seed document and section")
    criteria = models.JSONField(
        default=dict, blank=True, help_text="what the audit compares (by kind)"
    )
    resolution = models.TextField(blank=True, help_text="what the catalogue does instead, and why")
    acknowledged = models.BooleanField(default=False)

    class Meta:
        ordering = ["kind", "key"]

    def __str__(self):
        return self.key


class ApiToken(models.Model):
    """A per-user token for the build API (`Authorization: Bearer <secret>`).

    Only the SHA-256 of the secret is stored; the secret itself is shown once, when the token
    is created in the admin. A request acts with its user's permissions; a revoked token is
    refused."""

    PREFIX = "vc_"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=80, help_text='what uses it, e.g. "CI on builder-01"')
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True, editable=False)
    revoked = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created", "-id"]
        verbose_name = "API token"

    def __str__(self):
        return f"{self.name} ({self.user})"

    @staticmethod
    def hash_secret(secret: str) -> str:
        import hashlib

        return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()

    @classmethod
    def issue(cls, user: models.Model, name: str) -> tuple[ApiToken, str]:
        """Create a token and return it with its secret (which is not stored)."""
        import secrets

        secret = cls.PREFIX + secrets.token_urlsafe(32)
        token = cls.objects.create(user=user, name=name, key_hash=cls.hash_secret(secret))
        return token, secret


class AuditedBranch(models.Model):
    """Marks a branch whose AuditFinding rows are current. Any write that can change a branch's
    findings deletes its mark (catalog/audit_store.py); the findings of an unmarked branch are
    computed again before they are read."""

    branch = models.OneToOneField(
        Branch, primary_key=True, on_delete=models.CASCADE, related_name="audited"
    )

    def __str__(self):
        return f"{self.branch_id} audited"


class AuditFinding(models.Model):
    """One stored per-branch finding of the audit: a lint finding, a record failing validation,
    an impossible pairing or a stated count the branch does not have. Stored when the branch is
    written, so the audit page reads a page of rows instead of checking every variant."""

    KINDS = [
        ("lint", "lint"),
        ("validation", "validation"),
        ("impossible", "impossible pairing"),
        ("count", "stated count"),
    ]

    branch = models.ForeignKey(Branch, on_delete=models.CASCADE, related_name="audit_findings")
    variant = models.ForeignKey(
        Variant, null=True, on_delete=models.CASCADE, related_name="audit_findings"
    )
    kind = models.CharField(max_length=10, choices=KINDS)
    position = models.PositiveIntegerField(help_text="order within the branch and kind")
    rule = models.CharField(max_length=40, blank=True)
    variant_name = models.CharField(max_length=200, blank=True)
    key = models.CharField(max_length=200, blank=True)
    subject = models.CharField(max_length=300, blank=True)
    message = models.TextField()

    class Meta:
        ordering = ["branch", "kind", "position"]
        indexes = [models.Index(fields=["kind", "branch", "position"])]

    def __str__(self):
        return f"{self.kind}: {self.message}"


class StructureRevision(models.Model):
    """One row counting the catalogue's structure changes, bumped in the writing transaction
    with the structure version (catalog/cache.py): a stored snapshot is current while it was
    built at this revision, whatever the cache holds."""

    number = models.PositiveBigIntegerField(default=0)

    def __str__(self):
        return f"structure revision {self.number}"


class StoredSnapshot(models.Model):
    """A derived picture of the catalogue (the selector's index), pickled, with the structure
    revision it was built at: a cold process loads it in milliseconds instead of reading every
    variant."""

    name = models.CharField(max_length=40, primary_key=True)
    revision = models.PositiveBigIntegerField()
    data = models.BinaryField()

    def __str__(self):
        return f"{self.name} at revision {self.revision}"

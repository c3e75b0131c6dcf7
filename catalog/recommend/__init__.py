"""The "which variant?" engine: plain Python, no Django import (a test checks this).

    from catalog.recommend import Catalogue, detect_hardware, recommend, next_step

    facts = detect_hardware(pasted_text)     # parse nvidia-smi / lscpu / cpuinfo / uname / sysctl
    if facts.errors: ...                     # sentences naming what was wrong with the paste
    answers = {**facts.answers(), "workload": "general"}
    result = recommend(answers, catalogue)   # Recommendation: variant, reasons, warnings, ...

Modules: `steps` (the questions: one Step record each, with its fields), `readers` (how one
answer is read), `answers` (the engine's input normalisation), `rules` (the decision rules as
data), `engine` (`recommend`: selection), `cpus` (CPU names and archspec's feature data),
`gpus` (GPU name resolution), `detect/` (one parser per tool output), `snapshot` (the
catalogue as plain records).
"""

from catalog.recommend import detect  # the package; its dispatcher is detect.detect
from catalog.recommend.answers import Answers, normalise
from catalog.recommend.cpus import complete_features, name_microarchitecture
from catalog.recommend.detect import (
    Facts,
    GpuFacts,
    parse_cpuinfo,
    parse_lscpu,
    parse_nvidia_smi,
    parse_nvidia_smi_csv,
    parse_nvidia_smi_q,
    parse_sysctl,
    parse_uname,
)
from catalog.recommend.detect import detect as detect_hardware
from catalog.recommend.engine import Alternative, Pick, Recommendation, recommend
from catalog.recommend.gpus import KNOWN_GPUS, normalise_gpu_name, resolve_gpu_name
from catalog.recommend.readers import AnswerError
from catalog.recommend.snapshot import (
    ArchitectureInfo,
    BranchInfo,
    Catalogue,
    GpuModelInfo,
    IsaInfo,
    VariantInfo,
)
from catalog.recommend.steps import STEPS, Choice, Field, Step, missing_required, next_step

__all__ = [
    "Alternative",
    "AnswerError",
    "Answers",
    "ArchitectureInfo",
    "BranchInfo",
    "Catalogue",
    "Choice",
    "Facts",
    "Field",
    "GpuFacts",
    "GpuModelInfo",
    "IsaInfo",
    "KNOWN_GPUS",
    "Pick",
    "Recommendation",
    "STEPS",
    "Step",
    "VariantInfo",
    "complete_features",
    "detect",
    "detect_hardware",
    "missing_required",
    "name_microarchitecture",
    "next_step",
    "normalise",
    "normalise_gpu_name",
    "parse_cpuinfo",
    "parse_lscpu",
    "parse_nvidia_smi",
    "parse_nvidia_smi_csv",
    "parse_nvidia_smi_q",
    "parse_sysctl",
    "parse_uname",
    "recommend",
    "resolve_gpu_name",
]

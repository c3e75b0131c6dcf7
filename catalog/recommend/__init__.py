"""The "which variant?" engine: plain Python, no Django import (a test checks this).

    from catalog.recommend import Catalogue, detect_hardware, recommend, next_step, steps

    facts = detect_hardware(pasted_text)             # parse nvidia-smi / lscpu / cpuinfo / uname / sysctl
    if facts.errors: ...                     # sentences naming what was wrong with the paste
    answers = {**facts.answers(), "workload": "general"}
    step = next_step(answers)                # the next question to ask, or None
    result = recommend(answers, catalogue)   # Recommendation: variant, reasons, warnings, ...

Modules: `snapshot` (the catalogue as plain records), `detect` (tool-output parsers),
`gpus` (GPU name resolution), `tree` (the decision tree and its rules, as data),
`engine` (`recommend`).
"""
from catalog.recommend import detect  # the module; its dispatcher is detect.detect
from catalog.recommend.detect import (
    Facts,
    GpuFacts,
    name_microarchitecture,
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
from catalog.recommend.snapshot import (
    ArchitectureInfo,
    BranchInfo,
    Catalogue,
    GpuModelInfo,
    IsaInfo,
    VariantInfo,
)
from catalog.recommend.tree import STEPS, Choice, Step, choices_for, missing_required, next_step, steps

__all__ = [
    "Alternative", "ArchitectureInfo", "BranchInfo", "Catalogue", "Choice", "Facts", "GpuFacts",
    "GpuModelInfo", "IsaInfo", "KNOWN_GPUS", "Pick", "Recommendation", "STEPS", "Step",
    "VariantInfo", "choices_for", "detect", "detect_hardware", "missing_required", "name_microarchitecture",
    "next_step", "normalise_gpu_name", "parse_cpuinfo", "parse_lscpu", "parse_nvidia_smi",
    "parse_nvidia_smi_csv", "parse_nvidia_smi_q", "parse_sysctl", "parse_uname", "recommend",
    "resolve_gpu_name", "steps",
]

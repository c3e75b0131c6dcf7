""" "Which variant?": the engine, its input and output, the command line and the web views.

    from catalog.wizard.detect import detect
    from catalog.wizard.engine import recommend

    facts = detect(pasted_text)              # parse nvidia-smi / lscpu / cpuinfo / uname / sysctl
    if facts.errors: ...                     # sentences naming what was wrong with the paste
    answers = {**facts.answers(), "workload": "general"}
    result = recommend(answers, catalogue)   # Recommendation: variant, reasons, warnings, ...

The engine is plain Python with no Django import (a test checks this): `steps` (the questions:
one Step record each, with its fields), `readers` (how one answer is read), `answers` (the
engine's input normalisation), `rules` (the decision rules as data), `engine` (`recommend`:
selection), `cpus` (CPU names and archspec's feature data), `gpus` (GPU name resolution),
`detect/` (one linear parser per tool output), `snapshot` (the catalogue as plain records).
Around it: `inputs` (form, JSON and CLI input into answers), `output` (JSON, text and links),
`cli` (`which-variant`), `host_probe` (reads this machine, standard library only) and `views`
(/wizard/ and /api/recommend).
"""

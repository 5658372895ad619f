"""The harness around the authors' code (Tsebeb/cvww_cir_horde, a checkout outside this repository).

`run_reference` launches their runs, `golden` computes the golden fixtures, `crossover` and `trajectory` compare the
two codes from shared states. Each is a command (`python lab/tools/reference/<name>.py` or, from the repository root,
`python -m tools.reference.<name>`) and imports its siblings from this package."""

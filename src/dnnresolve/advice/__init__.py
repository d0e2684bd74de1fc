"""Advice for what `explain` read: its diagnoses (``dnnresolve.explain``, an input here) made concrete for a machine.

- ``fixes``: the catalog's steps with the machine's modules, installs and the matrix's builds in their place
- ``planned``: the failing framework's release planned as `plan` plans it, its first option as the leading fix

Above the planner and explain's reading half; neither imports this package.
"""

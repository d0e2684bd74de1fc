"""A Slurm cluster's nodes, read through Slurm itself: ``sinfo`` for what the cluster says of each node, ``srun``
to run ``dnnresolve detect --json`` on each one (``collect``), a directory of profiles with an index (``store``),
and the nodes grouped by what a requirement's verdict depends on (``groups``, no I/O).

Loaded only by ``fleet collect`` and ``--fleet``: a plain plan or check never imports it."""

"""The jobs on files, as library functions: what each ``focal`` command runs.

- :mod:`~focal.workflows.train`: :func:`train_fusion` (``focal train``) and
  :func:`train_multiclass_fusion` (``focal train-multiclass``);
- :mod:`~focal.workflows.apply`: :func:`apply_model` (``focal apply``), with quality files
  :func:`apply_quality_model`, and :func:`apply_to_files`, any per-trial transform streamed
  over the systems' files;
- :mod:`~focal.workflows.evaluate`: :func:`evaluate_binary` (``focal evaluate``; every option
  of the command is one of its arguments, ``dask=`` included), :func:`evaluate_multiclass`
  (``focal evaluate-multiclass``) and :func:`evaluate_term_detection` (``focal sws``), each
  returning an :class:`Evaluation` (reports, and the page of figures when asked for), and
  :func:`summary_table`;
- :mod:`~focal.workflows.normalize`: :func:`normalize_files` (``focal normalize``).

They read through :mod:`focal.io`, fit and apply :mod:`focal.estimators`, measure with
:mod:`focal.metrics`, save with :mod:`focal.models` and draw with :mod:`focal.plots`; each
logs its steps with their times (``-v``) and shows them with ``progress=True``. The command
line only parses arguments, makes one call of one of these and prints what it returns.
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        ".train": ("FileFit", "train_fusion", "train_multiclass_fusion"),
        ".apply": ("apply_model", "apply_quality_model", "apply_to_files"),
        ".evaluate": (
            "Evaluation",
            "evaluate_binary",
            "evaluate_multiclass",
            "evaluate_term_detection",
            "summary_table",
        ),
        ".normalize": ("normalize_files",),
    },
)

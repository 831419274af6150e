"""The jobs on files, as library functions: what each ``focal`` command runs.

- :mod:`~focal.workflows.train`: :func:`train_fusion` (``focal train``) and
  :func:`train_multiclass_fusion` (``focal train-multiclass``);
- :mod:`~focal.workflows.apply`: :func:`apply_model` (``focal apply``), with quality files
  :func:`apply_quality_model`, and :func:`apply_to_files`, any per-trial transform streamed
  over the systems' files;
- :mod:`~focal.workflows.evaluate`: :func:`evaluate_binary` (``focal evaluate``),
  :func:`evaluate_multiclass` (``focal evaluate-multiclass``) and
  :func:`evaluate_term_detection` (``focal sws``);
- :mod:`~focal.workflows.normalize`: :func:`normalize_files` (``focal normalize``).

They read through :mod:`focal.io`, fit and apply :mod:`focal.estimators`, measure with
:mod:`focal.metrics` and save with :mod:`focal.models`; the command line only parses arguments
and prints what they return.
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        ".train": ("FileFit", "train_fusion", "train_multiclass_fusion"),
        ".apply": ("apply_model", "apply_quality_model", "apply_to_files"),
        ".evaluate": ("evaluate_binary", "evaluate_multiclass", "evaluate_term_detection"),
        ".normalize": ("normalize_files",),
    },
)

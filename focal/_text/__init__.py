"""focal's file engine (private): text read in blocks of whole lines, split into fields and
numbers with NumPy, and output files written safely. It imports nothing else of focal; the
readers of :mod:`focal.io` and :mod:`focal.std`, the model files and the workflows build on it.

- :mod:`~focal._text.source`: where bytes come from (``-`` is standard input; gzip by magic);
- :mod:`~focal._text.blocks`: blocks of whole lines, NUL bytes and invalid UTF-8 refused;
- :mod:`~focal._text.fields`: the tokenizer: lines split into fields, score-file records, ids as
  fixed-width bytes;
- :mod:`~focal._text.pool`: the one thread pool (blocks parsed ahead, in order);
- :mod:`~focal._text.numbers`: exact decimal text <-> float64, vectorized;
- :mod:`~focal._text.arrow`: the same kernels through pyarrow, when the ``fast`` extra is in;
- :mod:`~focal._text.outputs`: outputs that never replace an input and appear whole or not at all.
"""

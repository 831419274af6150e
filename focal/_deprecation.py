"""Old attribute names kept for one release: reading one works and warns."""

from __future__ import annotations

import warnings

__all__ = ["renamed"]


class renamed:  # noqa: N801 - used like a decorator-style descriptor, lowercase as property
    """Class attribute ``old = renamed("new")``: reading ``obj.old`` gives ``obj.new`` with a
    ``DeprecationWarning`` naming the new attribute.

    Parameters
    ----------
    new : str
        The attribute's current name.

    Examples
    --------
    >>> class Point:
    ...     def __init__(self):
    ...         self.p_miss = 0.25
    ...     pmiss = renamed("p_miss")
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     value = Point().pmiss
    >>> value, caught[0].category.__name__
    (0.25, 'DeprecationWarning')
    """

    def __init__(self, new: str):
        self.new = new
        self.old = None
        self.owner = ""

    def __set_name__(self, owner, name):
        self.old = name
        self.owner = owner.__name__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        warnings.warn(
            f"{self.owner}.{self.old} is deprecated and will be removed in the next "
            f"release; use {self.owner}.{self.new}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(obj, self.new)

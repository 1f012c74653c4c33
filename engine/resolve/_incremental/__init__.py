"""The incremental machinery: indexes, tracks, watches and path logs that equal the reference fold after every edit.

Private to `resolve`'s users through `document.Context`, which owns the `Store` they all read.
"""


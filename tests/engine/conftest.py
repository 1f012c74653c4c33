"""The engine's tests, in folders that mirror engine/'s: this folder holds their shared support.

Being a conftest outside a package, its folder is put on `sys.path`, so a test in any subfolder imports
`strategies`, `reference`, `incremental_strategies`, `chapter_support` and `exec_support` by name.
"""

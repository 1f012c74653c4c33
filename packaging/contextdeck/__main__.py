import sys

from contextdeck._child import run_child

# A child process (the validation worker of a frozen bundle) is dispatched before the command line is
# imported: it loads only what its module needs.
if not run_child(sys.argv[1:]):
    from contextdeck._cli import main

    raise SystemExit(main())

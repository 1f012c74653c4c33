from contextdeck._cli import main

raise SystemExit(main())

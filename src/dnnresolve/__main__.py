from dnnresolve.cli import main

raise SystemExit(main())

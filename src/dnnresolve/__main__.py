from dnnresolve.launcher import main

raise SystemExit(main())

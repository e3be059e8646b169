from magnotia_mcp.cli import main

raise SystemExit(main())

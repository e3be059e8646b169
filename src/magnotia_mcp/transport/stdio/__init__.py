"""The stdio transport: ``prelude`` answers the first lines before asyncio loads, ``loop`` serves the rest,
``lines`` frames them."""

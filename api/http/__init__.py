"""ASGI middleware at the HTTP edge: which hosts are served, which headers go out."""

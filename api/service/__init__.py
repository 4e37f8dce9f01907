"""The HTTP service: the FastAPI app (``app.create_app``), its routes, bounds and the uvicorn server."""

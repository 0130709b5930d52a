"""The local web app: a FastAPI JSON API over one model and a page that draws its steps."""

from lmscope.web.app import create_app

__all__ = ["create_app"]

"""The web app's routes, one ``APIRouter`` per page or API area; each gets the served model
and trace store from the one dependency ``web.served.Serving``."""

from lmscope.web.routers import (
    circuits,
    interpret,
    lab,
    models,
    pages,
    pictures,
    precision,
    rnn,
    sampling,
    step_data,
    steps,
)

ROUTERS = (
    pages.router,
    steps.router,
    models.router,
    precision.router,
    step_data.router,
    pictures.router,
    sampling.router,
    interpret.router,
    circuits.router,
    lab.router,
    rnn.router,
)

__all__ = ["ROUTERS"]

"""The one check of an experiment's --models list (the race, recall): every name known, and a
GPT to compare with at least one recurrent model."""

from __future__ import annotations

from collections.abc import Sequence

from lmscope.errors import InvalidInputError


def check_models(
    models: Sequence[str], known: Sequence[str], recurrent: Sequence[str], example: str = ""
) -> None:
    unknown = [m for m in models if m not in known]
    if unknown:
        raise InvalidInputError(
            "error.lab.models.unknown", model=unknown[0], known=", ".join(known)
        )
    if "gpt" not in models or not any(m in recurrent for m in models):
        if example:
            raise InvalidInputError(
                "error.lab.models.needs-example", recurrent=", ".join(recurrent), example=example
            )
        raise InvalidInputError("error.lab.models.needs", recurrent=", ".join(recurrent))

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
        raise InvalidInputError(f"unknown model {unknown[0]!r} in --models; use {', '.join(known)}")
    if "gpt" not in models or not any(m in recurrent for m in models):
        raise InvalidInputError(
            f"--models needs gpt and at least one of {', '.join(recurrent)}{example}"
        )

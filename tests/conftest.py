"""Shared test settings: where the bundled data lives."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The corpus of real positions with reference figures (``fixtures/corpus``).
CORPUS = ROOT / "fixtures" / "corpus"


@pytest.fixture(autouse=True, scope="session")
def answers_fit_the_answer_schema():
    """Every answer ``routecalc.api.solve`` gives during the run (in process, through
    the CLI or the service) is checked against the shipped answer schema."""
    import json

    from jsonschema import Draft202012Validator

    from routecalc import api
    from routecalc.schemas import schema_text

    validator = Draft202012Validator(json.loads(schema_text("answer")))
    solve = api.solve

    def checked_solve(*args, **kwargs):
        answer = solve(*args, **kwargs)
        problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"[:300] for e in validator.iter_errors(answer)]
        assert not problems, f"the answer does not fit answer.schema.json: {problems[:3]}"
        return answer

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(api, "solve", checked_solve)
        yield

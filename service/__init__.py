"""routecalc over HTTP: the FastAPI app (:mod:`service.app`) and its web page (``static/``)."""

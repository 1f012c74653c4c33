"""The activity worker: a process of its own (`python -m contextdeck.engine.run._worker`, see `_pool`) that runs
one activity call at a time for the application.

It reads requests from its stdin and answers on its stdout, both framed (`_frames`). Before anything runs,
the protocol moves to private descriptors: stdin becomes /dev/null, and stdout and stderr become the two
capture files the application gave it (stdout's descriptor number in `CAPTURE_VARIABLE`, stderr as stderr),
emptied before each call, so what an activity prints is the call's own and never mixes with the protocol.

A request is pickled by the application (trusted); an answer is JSON (`{"result": ...}` or `{"error": {type,
message, traceback}}`), so the application never unpickles what user code produced.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import pickle
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import IO, Any

from ..calls._activities import Activities, ActivityLoadError, error_type, load_activities
from ..calls._outputs import MAX_RESULT_BYTES, OutputError, check_json
from ..document import _json
from ..protocol._errors import describe_exception
from ._frames import CAPTURE_VARIABLE, read_frame, write_frame

_ORPHAN_CHECK = 0.5  # seconds between looks at whether the application is still there


def _take_protocol() -> tuple[IO[bytes], IO[bytes]]:
    """The request and answer streams on private descriptors; 0, 1 and 2 left to the activities."""
    requests = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    capture = os.environ.pop(CAPTURE_VARIABLE, None)
    os.dup2(int(capture) if capture else 2, 1)  # without a file of its own, stdout joins stderr's
    for stream in (sys.stdout, sys.stderr):  # what a call printed before it hung is there to read
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(write_through=True)  # type: ignore[union-attr]
    return requests, answers


def _leave_when_orphaned(parent: int) -> None:
    """End this process when the application is gone (killed mid-call): no worker outlives it."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_ORPHAN_CHECK)
        os._exit(0)

    threading.Thread(target=watch, name="contextdeck-orphan-watch", daemon=True).start()


_loaded: dict[str, tuple[float, Activities]] = {}


def _activity(file: str, name: str) -> Any:
    """The function of activity `name` in `file`, the file imported once (again when it changed)."""
    changed = Path(file).stat().st_mtime
    found = _loaded.get(file)
    if found is None or found[0] != changed:
        found = (changed, load_activities(file))
        _loaded[file] = found
    entry = found[1].get(name)
    if entry is None:
        raise ActivityLoadError(file, f"no longer defines the activity {name!r}")
    return entry.fn


def _run(request: dict[str, Any]) -> Any:
    fn = _activity(request["file"], request["name"])
    args = (request["call"], request["tool"], request["context"])
    if inspect.iscoroutinefunction(fn):
        return asyncio.run(fn(*args))
    result = fn(*args)
    if inspect.isawaitable(result):
        async def wait() -> Any:
            return await result

        result = asyncio.run(wait())
    return result


def _answer(request: dict[str, Any]) -> bytes:
    """Run the call; its result or failure as JSON bytes, within `MAX_RESULT_BYTES`."""
    try:
        result = _run(request)
    except BaseException as error:  # SystemExit, KeyboardInterrupt too: they are the call's failure
        failure = {"type": error_type(error), "message": describe_exception(error),
                   "traceback": "".join(traceback.format_exception(error)).rstrip()}
        return _json.dumps({"error": failure}, indent=False).encode("utf-8", "surrogatepass")
    try:
        check_json(result, "result")
        answer = _json.dumps({"result": result}, indent=False).encode("utf-8", "surrogatepass")
    except (OutputError, ValueError) as error:
        return _json.dumps({"error": {"type": "output", "message": str(error)}}, indent=False).encode()
    if len(answer) > MAX_RESULT_BYTES + 16:
        message = (f"result: {len(answer) - 12:,} bytes of JSON, more than the {MAX_RESULT_BYTES:,} a result may be")
        return _json.dumps({"error": {"type": "output", "message": message}}, indent=False).encode()
    return answer


def _empty_captures() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    for fd in (1, 2):
        with contextlib.suppress(OSError):  # not a file (a worker started by hand on a terminal): nothing to empty
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)


def main() -> None:
    requests, answers = _take_protocol()
    _leave_when_orphaned(os.getppid())
    write_frame(answers, b"")  # ready: what it imports is imported
    while True:
        frame = read_frame(requests)
        if frame is None:  # the application closed the pipe: it is done with this worker
            return
        request = pickle.loads(frame)
        _empty_captures()
        answer = _answer(request)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # the activity closed it: nothing more to capture
                stream.flush()
        write_frame(answers, answer)


if __name__ == "__main__":
    main()

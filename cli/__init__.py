"""pitboss command line: thin click commands over ``ledger`` and ``projections``.

``run`` is the console script's entry point. It lives here, in a module that imports
only the standard library's ``sys`` and ``typing`` (``signal`` when it answers), so that a Ctrl-C while the
commands themselves are still being imported (click, then the ledger: a tenth of a second
or more) is answered like a Ctrl-C anywhere else, one line and exit 130 (issue 14 point 5),
not with a traceback of the import. Before this module runs, the interpreter's own start-up
is Python's: a Ctrl-C there ends the process as Python does."""

from __future__ import annotations

import sys
from typing import NoReturn

EXIT_INTERRUPTED = 130
INTERRUPTED = "pitboss: interrupted; nothing half-written (each batch is all or nothing)"


def interrupted(as_json: bool) -> NoReturn:
    """The one answer to Ctrl-C (SIGINT): under ``--json`` an object saying so on stdout,
    then one line on stderr, exit 130. A second Ctrl-C does not interrupt the message."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if as_json:
        sys.stdout.write(f'{{"ok": false, "interrupted": true, "exit_code": {EXIT_INTERRUPTED}}}\n')
        sys.stdout.flush()
    sys.stderr.write(INTERRUPTED + "\n")
    sys.stderr.flush()
    sys.exit(EXIT_INTERRUPTED)


def run() -> None:
    """The ``pitboss`` program: ``cli.main.run`` once the commands are imported."""
    try:
        from cli.main import run as commands
    except KeyboardInterrupt:
        interrupted("--json" in sys.argv[1:])
    commands()

"""Where the values the records' redactor hides come from (``secrets.redactor_for``), named
once for every reader: the secrets file and the ``<secrets.env_prefix>NAME`` variables
(:func:`prefixed_secrets`), the config's own credentials and the controller's seal key
(:func:`credentials_of`) and the controller's seal key (:func:`seal_key_of`, hidden
literally).

Lives with the config, not with the execution layer, so a command that only loads a config
(a plain ``validate``) can ask :func:`may_hide_anything` without importing the redactor.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.settings.models import Config, SecretsSettings

#: The controller's seal key in its state directory (``controller.service.statedir``).
COMMIT_KEY_NAME = "commit.key"
#: What a seal key the controller made holds: 64 hex digits, one line.
_KEY_TEXT = re.compile(r"[0-9a-f]{64}")


def prefixed_secrets(settings: SecretsSettings, environ: Mapping[str, str]) -> dict[str, str]:
    """The secrets the environment holds, by name: ``<env_prefix>NAME`` variables."""
    prefix = settings.env_prefix
    return {
        key[len(prefix) :]: value
        for key, value in environ.items()
        if key.startswith(prefix) and len(key) > len(prefix)
    }


def credentials_of(config: Config, environ: Mapping[str, str]) -> tuple[set[str], set[str]]:
    """(the environment variables that hold the controller's own credentials, the values
    never to be written): the webhook secret, the UI token and the notify URLs the config
    names by variable, kept out of every tool process; and, as values to redact, theirs,
    each catalog entry's (:func:`controller.settings.toolspec.tool_credentials`) and the
    userinfo (password and user part) and query values of the remote's URL and of each
    ``notify.urls`` entry (and of the URLs the variables hold). Rounds 25 and 26: only
    ``$<secrets.*>`` values were hidden, and a tool that echoed its ``Authorization``
    header, its ``env`` or its argv, or an error quoting a URL, had them committed; round
    41: a URL's *user* part (``https://TOKEN@host``) was not taken."""
    from controller.settings.toolspec import tool_credentials, url_credentials

    names = {config.webhook.secret_env, config.ui.token_env, *config.notify.url_env}
    names.discard(None)
    found = {environ[name] for name in names if name and environ.get(name)}
    for spec in config.tools.values():
        found |= tool_credentials(spec)
    url = config.remote.url if config.remote is not None else None
    urls = [url, *config.notify.urls, *(environ.get(name) for name in config.notify.url_env)]
    for url in urls:
        if url:
            found |= url_credentials(url, found.add)
    return {name for name in names if name}, found


def seal_key_of(config: Config) -> set[str]:
    """The controller's seal key as its file spells it (``<state_dir>/commit.key``), when
    there is one: whoever reads it can seal commits as this controller, so no record may
    hold it (a tool that prints a file of the state directory, an error quoting it). The
    redactor hides it as written and in its whole encodings only (``Redactor(literal=)``):
    64 random hex digits made by the controller, not a value an operator or a tool spells in
    other notations, and a key in every deployment must not cost every record the full
    search that configured secrets get (round 72's 1,000-plan merge burst: 28 s -> 40 s). Opened
    without blocking and read only when a regular file (round 69: a FIFO there hung
    ``run``); anything but a key the controller made is none (nothing to hide)."""
    from controller.errors import PlangateError

    try:
        path = config.state_path() / COMMIT_KEY_NAME
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, PlangateError):  # no state directory yet, or none configured here
        return set()
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return set()
        text = os.read(fd, 4096).decode("ascii", "replace").strip()
    except OSError:
        return set()
    finally:
        os.close(fd)
    return {text} if _KEY_TEXT.fullmatch(text) else set()


def may_hide_anything(config: Config, environ: Mapping[str, str]) -> bool:
    """Whether the redactor of ``config`` could hide a value: a secrets file (read only by
    the redactor: its values may change), a prefixed variable, or a credential of the
    config's. False: nothing any printer writes can hold a secret of this config."""
    if config.secrets.file is not None or prefixed_secrets(config.secrets, environ):
        return True
    return bool(credentials_of(config, environ)[1] or seal_key_of(config))

"""Round 25: the config's own credentials never reach a tool's environment nor git.

Only ``$<secrets.*>`` values were hidden; a tool that printed its environment handed on the
notify URL and the UI token it inherited, and one that echoed its ``Authorization`` header
or its catalog ``env`` had them committed; a catalog URL's password was quoted in errors."""

from __future__ import annotations

from pathlib import Path

from controller.execution.secrets import SecretStore, credentials_of
from controller.execution.tools.http import _shown
from controller.settings import config_from_data
from controller.settings.toolspec import MIN_CREDENTIAL_CHARS


def _config(tmp_path: Path) -> object:
    return config_from_data(
        {
            "webhook": {"secret_env": "WEBHOOK_SECRET"},
            "ui": {"token_env": "UI_TOKEN"},
            "notify": {"url_env": ["HOOK_URL"]},
            "tools": {
                "dump": {
                    "kind": "exec",
                    "argv": ["true"],
                    "env": {"API_KEY": "k-1234567890", "LANG": "C"},
                },
                "hx": {
                    "kind": "http",
                    "url": "http://svc:p%40ss-word@127.0.0.1:9/x",
                    "headers": {"Authorization": "Bearer tok-abcdefgh", "Accept": "json"},
                },
            },
        },
        tmp_path / "plangate.yml",
    )


def test_the_config_names_its_credentials_and_their_values(tmp_path: Path) -> None:
    env = {"WEBHOOK_SECRET": "w-secret", "UI_TOKEN": "ui-token-1", "HOOK_URL": "https://h/T0K"}
    names, values = credentials_of(_config(tmp_path), env)  # type: ignore[arg-type]
    assert names == {"WEBHOOK_SECRET", "UI_TOKEN", "HOOK_URL"}
    assert {"w-secret", "ui-token-1", "https://h/T0K"} <= values
    assert {
        "k-1234567890",
        "Bearer tok-abcdefgh",
        "tok-abcdefgh",
        "p%40ss-word",
        "p@ss-word",
    } <= values
    assert not {"C", "json", "production"} & values  # named like no credential
    assert MIN_CREDENTIAL_CHARS == 4


def test_the_redactor_hides_them(tmp_path: Path) -> None:
    env = {"UI_TOKEN": "ui-token-1"}
    store = SecretStore.for_config(_config(tmp_path), env)  # type: ignore[arg-type]
    said = store.redactor.text("token ui-token-1, key k-1234567890, auth Bearer tok-abcdefgh")
    assert said == "token ***, key ***, auth ***"
    assert store.redactor.text("LANG=C accepts json") == "LANG=C accepts json"


def test_a_url_password_is_never_quoted() -> None:
    assert _shown("POST http://svc:p%40ss@127.0.0.1:9/x failed") == (
        "POST http://***@127.0.0.1:9/x failed"  # round 41: the whole userinfo
    )
    assert _shown("GET http://127.0.0.1/x") == "GET http://127.0.0.1/x"


def test_parts_argv_and_urls_of_the_catalog_are_credentials(tmp_path: Path) -> None:
    """Round 26: only whole env/header values were hidden; the token after ``Bearer`` or
    ``key=``, an argv token and a URL's query values were written, and ``show`` and git
    errors quoted URLs whole."""
    from controller.display import masked_url
    from controller.plan.catalog import maps_to
    from controller.settings.toolspec import tool_credentials

    config = config_from_data(
        {
            "tools": {
                "ex": {
                    "kind": "exec",
                    "argv": [
                        "/bin/tool",
                        "--token=T0k3n-aaaa",
                        "--password",
                        "Zq9-s3cret",
                        "deployment",
                        "{p}",
                    ],
                },
                "hx": {"kind": "http", "url": "https://h/x?api_key=K3y-bbbbbb&dry_run=true"},
            }
        },
        tmp_path / "p.yml",
    )
    ex, hx = config.tools["ex"], config.tools["hx"]  # type: ignore[attr-defined]
    assert tool_credentials(ex) == {"T0k3n-aaaa", "Zq9-s3cret"}  # "deployment" stays
    assert tool_credentials(hx) == {"K3y-bbbbbb"}
    assert maps_to(ex) == "exec: /bin/tool --token=*** --password *** deployment {p}"
    assert maps_to(hx) == "http: POST https://h/x?api_key=***&dry_run=true"
    assert (
        masked_url("git clone http://u:pw@h/r.git: fatal")
        == "git clone http://***@h/r.git: fatal"  # round 41: the user part too
    )


def test_round41_url_users_names_and_short_flags(tmp_path: Path) -> None:
    """Round 41: a URL's user part, names with ``PAT``/``JWT``/``PIN``/``SEED``/``MNEMONIC``
    as a word, and passwords in short argv flags are credentials; ports, paths, find's
    ``-print`` and names like ``PATH`` are not."""
    from controller.display import CREDENTIAL_NAME, masked_url
    from controller.settings.toolspec import ToolSpec, tool_credentials

    def argv(*items: str) -> set[str]:
        return tool_credentials(ToolSpec(kind="exec", argv=["tool", *items]))

    assert argv("https://Ghp4TokenAb12Cd34Ef@github.com/o/r.git") == {"Ghp4TokenAb12Cd34Ef"}
    assert argv("ssh://git@host/r.git") == set()  # a user name: hidden in URLs only
    assert masked_url("clone ssh://git@host/r.git") == "clone ssh://***@host/r.git"
    config = config_from_data(
        {
            "remote": {"url": "https://RemoteTok1Ab2Cd3Ef4@h/r.git", "branch": "main"},
            "notify": {"urls": ["https://NotifyTok2Ab3Cd4Ef5@h/x"]},
        },
        tmp_path / "p.yml",
    )
    found = credentials_of(config, {})[1]  # type: ignore[arg-type]
    assert {"RemoteTok1Ab2Cd3Ef4", "NotifyTok2Ab3Cd4Ef5"} <= found
    for name in ["GH_PAT", "API_JWT", "ADMIN_PIN", "TOTP_SEED", "WALLET_MNEMONIC", "adminPin"]:
        assert CREDENTIAL_NAME.search(name), name
    for name in ["PATH", "PATCH", "spinner", "mapping", "seedling", "COMPAT", "PASSTHROUGH"]:
        assert not CREDENTIAL_NAME.search(name), name
    assert argv("-u", "admin:Cu9Rl8Pw") == {"Cu9Rl8Pw"}
    assert argv("--user=admin:Cu9Rl8Pw", "-uroot") == {"Cu9Rl8Pw"}
    assert argv("-uroot", "-pMy5Sq4Lp", "appdb") == {"My5Sq4Lp"}
    assert argv("-h", "cache", "-a", "Rd7Is6Au") == {"Rd7Is6Au"}
    assert argv("sshpass", "-p", "Ss3Hp2As", "ssh", "deploy@host") == {"Ss3Hp2As"}
    assert argv("-p", "8080", "-p", "8080:80/tcp", "-p", "/srv/app", "-print", "-a") == set()
    assert argv("-u", "1000") == set()


def test_round43_a_url_user_name_is_no_credential() -> None:
    """Round 43: a URL's user part is a credential only when the URL has no password and it
    looks like a token (16 characters or more); a password is one at any length. Display
    masking still hides every userinfo."""
    from controller.display import masked_url
    from controller.settings.toolspec import ToolSpec, tool_credentials, url_credentials

    def argv(*items: str) -> set[str]:
        return tool_credentials(ToolSpec(kind="exec", argv=["tool", *items]))

    assert argv("https://deploy@git.example/r.git") == set()
    assert argv("https://carol@git.example/r.git") == set()
    assert argv("postgres://postgres@db/x") == set()
    assert argv("https://ShortTok15chars@h/r.git") == set()  # 15 characters: a name
    assert argv("https://LongTok16charsAb@h/r.git") == {"LongTok16charsAb"}
    assert argv("postgres://app:PW@db/x") == {"PW"}  # a password at any length, not the user
    assert argv("https://LongUserName0123456:pw12@h/") == {"pw12"}
    assert url_credentials("https://deploy@h/x", lambda _: None) == set()
    assert masked_url("clone https://deploy@git.example/r.git") == (
        "clone https://***@git.example/r.git"
    )

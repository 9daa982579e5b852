"""What a user installs beside the binaries, checked against the binaries themselves: the config
keys documented everywhere they are described, the man pages (mandoc lint clean), the bash, zsh and
fish completions (loaded in the real shells; task ids completed from a live daemon), `afproxyctl
env` (a shell pointed at the daemon reaches an origin through it) and `make install DESTDIR=…`."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import clean_env, ctl, live_task, short_socket_dir, start_curl

REPO = Path(__file__).resolve().parents[2]
MiB = 1024 * 1024


def run(*argv: str, env: dict[str, str] | None = None, timeout: float = 60, cwd: Path | None = None,
        ) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env=clean_env(env), cwd=cwd)


def ok(r: subprocess.CompletedProcess, what: str) -> str:
    assert r.returncode == 0, f"{what}: exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    return r.stdout


def config_keys(afproxy_bin: str) -> list[tuple[str, str, str]]:
    out = ok(run(afproxy_bin, "--list-config-keys"), "afproxy --list-config-keys")
    keys = [tuple(line.split("\t")) for line in out.splitlines()]
    assert all(len(k) == 3 for k in keys), out
    return keys


@pytest.fixture(scope="module")
def man_dir(afproxy_bin, afproxyctl_bin, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("man")
    ok(run(REPO / "scripts" / "gen-man", out, afproxy_bin, afproxyctl_bin), "scripts/gen-man")
    return out


# ----------------------------------------------------------------------------------------------
# One source for the config keys


def test_every_config_key_is_documented_in_the_docs_the_example_config_and_the_man_page(afproxy_bin, man_dir):
    keys = config_keys(afproxy_bin)
    names = [k for k, _, _ in keys]
    # The listing is the parser's own table: the keys everybody knows must be in it.
    for known in ("listen", "max-connections", "web-listen", "throttle-host", "intercept-hosts"):
        assert known in names
    dump = json.loads(ok(run(afproxy_bin, "--experimental-dump-help"), "--experimental-dump-help"))
    flags = {"--" + n["name"] for a in dump["command"]["arguments"] for n in a.get("names") or []
             if n["kind"] == "long"}
    reference = (REPO / "docs" / "configuration.md").read_text()
    example = (REPO / "config" / "afproxy.conf").read_text()
    page = (man_dir / "afproxy.conf.5").read_text()
    missing = []
    for key, environment, flag in keys:
        if flag not in flags:
            missing.append(f"{key}: its flag {flag} is not an option of afproxy")
        row = re.search(rf"^\| `{re.escape(flag)}[ `].*\| `{re.escape(environment)}`.*\| `{re.escape(key)}`",
                        reference, re.M)
        if not row:
            missing.append(f"{key}: no row `{flag}` | `{environment}` | `{key}` in docs/configuration.md")
        if not re.search(rf"^#? ?{re.escape(key)} =", example, re.M):
            missing.append(f"{key}: not in config/afproxy.conf (as `{key} = …` or `# {key} = …`)")
        if f".It Cm {key} No =" not in page:
            missing.append(f"{key}: not in afproxy.conf(5)")
        if f".It Ev {environment}" not in (man_dir / "afproxy.8").read_text():
            missing.append(f"{key}: {environment} not in afproxy(8)")
    assert not missing, "\n".join(missing)


# ----------------------------------------------------------------------------------------------
# Man pages


@pytest.mark.skipif(shutil.which("mandoc") is None, reason="mandoc is not installed (scripts/install-deps)")
def test_man_pages_are_lint_clean_and_render(man_dir):
    for name in ("afproxy.8", "afproxyctl.1", "afproxy.conf.5"):
        lint = run("mandoc", "-T", "lint", "-W", "warning", man_dir / name)
        assert lint.returncode == 0 and not lint.stdout.strip(), f"{name}:\n{lint.stdout}{lint.stderr}"
    rendered = {name: ok(run("mandoc", "-T", "utf8", man_dir / name, env={"MANWIDTH": "100"}), name)
                for name in ("afproxy.8", "afproxyctl.1", "afproxy.conf.5")}
    plain = {name: re.sub(r".\x08", "", text) for name, text in rendered.items()}
    assert "--listen" in plain["afproxy.8"] and "AFPROXY_LISTEN" in plain["afproxy.8"]
    for command in ("list", "suspend", "resume", "cancel", "watch", "download", "env", "hold", "rules"):
        assert re.search(rf"^\s+{command}\b", plain["afproxyctl.1"], re.M), f"afproxyctl.1 lacks {command}"
    assert "max-connections = " in plain["afproxy.conf.5"]


# ----------------------------------------------------------------------------------------------
# Completions


def completion_script(afproxyctl_bin: str, shell: str, tmp_path: Path) -> Path:
    path = tmp_path / f"afproxyctl.{shell}"
    path.write_text(ok(run(afproxyctl_bin, "--generate-completion-script", shell), f"{shell} script"))
    return path


def bash_complete(script: Path, bindir: str, words: list[str]) -> subprocess.CompletedProcess:
    """Runs bash's completion function for `words` (the last one is being completed), as TAB does."""
    line = " ".join(shlex.quote(w) for w in words)
    program = f"""
        source {shlex.quote(str(script))}
        spec=$(complete -p afproxyctl) || exit 3
        function=$(sed -n 's/.*-F \\([^ ]*\\).*/\\1/p' <<< "$spec")
        COMP_WORDS=({line})
        COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
        COMP_LINE="{' '.join(words)}"
        COMP_POINT=${{#COMP_LINE}}
        "$function" afproxyctl "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
        printf '%s\\n' "${{COMPREPLY[@]}}"
    """
    return run("bash", "-c", program, env={"PATH": f"{bindir}:{os.environ['PATH']}"}, timeout=30)


def test_bash_completion_loads_and_completes_subcommands(afproxyctl_bin, tmp_path):
    script = completion_script(afproxyctl_bin, "bash", tmp_path)
    spec = ok(run("bash", "-c", f"source {shlex.quote(str(script))}; complete -p afproxyctl"), "complete -p")
    assert "afproxyctl" in spec
    words = ok(bash_complete(script, str(Path(afproxyctl_bin).parent), ["afproxyctl", "sus"]), "bash TAB")
    assert words.split() == ["suspend"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (scripts/install-deps)")
def test_zsh_completion_loads(afproxyctl_bin, tmp_path):
    script = completion_script(afproxyctl_bin, "zsh", tmp_path)
    fpath = tmp_path / "zfunc"
    fpath.mkdir()
    shutil.copy(script, fpath / "_afproxyctl")
    out = ok(run("zsh", "-f", "-c", f"fpath=({fpath} $fpath); autoload -Uz compinit; compinit -u -D; "
                 "print -r -- $_comps[afproxyctl]; autoload +X _afproxyctl && whence -w _afproxyctl",
                 env={"HOME": str(tmp_path)}), "zsh compinit")
    assert out.split("\n")[0].strip() == "_afproxyctl" and "function" in out, out


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed (scripts/install-deps)")
def test_fish_completion_loads_and_completes_subcommands(afproxyctl_bin, tmp_path):
    script = completion_script(afproxyctl_bin, "fish", tmp_path)
    out = ok(fish_complete(script, afproxyctl_bin, tmp_path, "afproxyctl sus"), "fish complete -C")
    assert [line.split("\t")[0] for line in out.splitlines()] == ["suspend"], out


def fish_complete(script: Path, afproxyctl_bin: str, tmp_path: Path, line: str) -> subprocess.CompletedProcess:
    bindir = str(Path(afproxyctl_bin).parent)
    return run("fish", "--no-config", "-c", f"source {shlex.quote(str(script))}; complete -C {shlex.quote(line)}",
               env={"PATH": f"{bindir}:{os.environ['PATH']}", "HOME": str(tmp_path),
                    "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")})


def test_task_ids_complete_from_the_live_daemon_and_from_nothing_without_one(
        proxy, origin, afproxyctl_bin, tmp_path):
    url = origin.url(f"/bytes/{60 * MiB}?completion")
    client = start_curl(proxy, "--limit-rate", "2M", "--max-time", "60", "-o", "/dev/null", url)
    try:
        tid = str(live_task(proxy, url)["id"])
        script = completion_script(afproxyctl_bin, "bash", tmp_path)
        bindir = str(Path(afproxyctl_bin).parent)
        for verb in ("suspend", "resume", "cancel", "show", "har"):
            words = ok(bash_complete(script, bindir, ["afproxyctl", "--socket", proxy.control_socket, verb, ""]),
                       f"bash TAB after {verb}")
            assert tid in words.split(), f"{verb}: {words!r}"
        # Bash only: fish's script asks `commandline -tC` for the cursor, which a non-interactive
        # fish (`fish -c`) refuses, and zsh's completion system needs a terminal to run at all.
    finally:
        client.kill()
        client.wait(timeout=10)
    # No daemon at the socket: nothing to offer, and nothing on the terminal.
    absent = str(short_socket_dir(tmp_path) / "absent.sock")
    result = bash_complete(script, str(Path(afproxyctl_bin).parent), ["afproxyctl", "--socket", absent, "suspend", ""])
    assert result.returncode == 0 and result.stdout.strip() == "" and result.stderr == "", result


# ----------------------------------------------------------------------------------------------
# afproxyctl env


def test_env_points_a_shell_at_the_daemon(proxy, origin, afproxyctl_bin):
    out = ok(ctl(proxy, "env"), "afproxyctl env")
    address = f"http://127.0.0.1:{proxy.port}"
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        assert f"export {name}='{address}'" in out.splitlines(), out
    assert "export no_proxy=''" in out.splitlines() and "export NO_PROXY=''" in out.splitlines(), out
    fish = ok(ctl(proxy, "env", "--fish", "--no-proxy", "localhost"), "afproxyctl env --fish").splitlines()
    assert f"set -gx http_proxy '{address}';" in fish and "set -gx NO_PROXY 'localhost';" in fish, fish
    # The shell that evaluates it reaches the origin through the daemon, with no -x.
    url = origin.url("/bytes/1000?through-env")
    program = f'eval "$({shlex.quote(afproxyctl_bin)} --socket {shlex.quote(proxy.control_socket)} env)"; ' \
              f"curl -sS -o /dev/null -w '%{{http_code}}' {shlex.quote(url)}"
    assert ok(run("bash", "-c", program), "eval + curl") == "200"
    assert proxy.history_record(url)["status"] == 200


def test_env_without_a_daemon_is_the_usual_unreachable_error(tmp_path):
    absent = str(short_socket_dir(tmp_path) / "absent.sock")
    r = ctl(absent, "env")
    assert r.returncode == 69 and r.stdout == "", r
    assert "afproxy is not reachable at" in r.stderr


# ----------------------------------------------------------------------------------------------
# make install


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_install_puts_man_pages_and_completions_in_place_and_uninstall_removes_them(
        afproxy_bin, afproxyctl_bin, tmp_path):
    builddir = Path(afproxy_bin).parent
    assert Path(afproxyctl_bin).parent == builddir, "make install-files takes both binaries from one directory"
    stage = tmp_path / "stage"
    common = [f"DESTDIR={stage}", "PREFIX=/usr/local", f"BUILDDIR={builddir}", f"GENDIR={tmp_path / 'gen'}"]
    ok(run("make", "-s", "install-files", *common, cwd=REPO, timeout=120), "make install-files")
    expected = [
        "usr/local/share/man/man1/afproxyctl.1", "usr/local/share/man/man5/afproxy.conf.5",
        "usr/local/share/man/man8/afproxy.8",
        "usr/local/share/bash-completion/completions/afproxyctl",
        "usr/local/share/zsh/site-functions/_afproxyctl",
        "usr/local/share/fish/vendor_completions.d/afproxyctl.fish",
        "usr/local/share/doc/afproxy/docs/configuration.md",
        "usr/local/bin/afproxyctl",
    ]
    for path in expected:
        assert (stage / path).is_file(), f"{path} not installed"
    assert (stage / "usr/local/share/man/man8/afproxy.8").read_text().startswith(".Dd ")
    ok(run("make", "-s", "uninstall", *common, cwd=REPO, timeout=60), "make uninstall")
    left = [path for path in expected if (stage / path).exists()]
    assert not left, f"left behind by make uninstall: {left}"

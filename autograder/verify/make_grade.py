"""The verifier ``make grade`` plugs into its hook (``autograder/grade/verify.py``).

Same decision as the Otter plugin (decide.py), from the same zip: its tests, its ``files/``,
the plugin's limits and given-code fingerprints from its ``otter_config.json``. Everything is
read once, when the verifier is made, before any submission runs.

``make grade`` runs the notebook in its own engine, not through Otter's plugin events; its
child exports the variables of data questions itself and passes them as ``data`` (without
them, those questions would keep the kernel's verdicts), and says whether it ran confined.
"""

import json
import shutil
import tempfile
import zipfile
from pathlib import Path

from . import privileges, views
from .decide import decide
from .plugin import PLUGIN_NAME, Settings, kernel_verdicts, load_tests, record_decision


def _plugin_config(config: dict):
    """This plugin's entry in the zip's configuration, or None when the zip does not list it."""
    for entry in config.get("plugins", []):
        if entry == PLUGIN_NAME:
            return {}
        if isinstance(entry, dict) and PLUGIN_NAME in entry:
            return entry[PLUGIN_NAME] or {}
    return None


def verifier_for(autograder_zip):
    """``verifier(notebook, results, data=None, confined=False) -> (results, flags)`` for this zip; None when
    the zip does not list the plugin, or cannot be read (``make grade`` then says why)."""
    folder = Path(tempfile.mkdtemp(prefix="kit-verify-zip-"))
    try:
        with zipfile.ZipFile(autograder_zip) as zf:
            zf.extractall(folder)
        config = json.loads((folder / "otter_config.json").read_text("utf-8"))
        plugin_config = _plugin_config(config)
        if plugin_config is None:
            return None
        tests = load_tests(folder / "tests")
        files = views.snapshot(folder / "files")
    except (OSError, ValueError, zipfile.BadZipFile):
        return None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    settings = Settings.from_config(plugin_config)
    given = list(plugin_config.get("given", []))
    identity = privileges.identity(privileges.VERIFY_USER)

    def verifier(notebook, results, data=None, confined=False):
        with views.materialized(files) as materialized:
            decision = decide(notebook, tests, kernel_verdicts(results), confined=confined,
                              identity=identity, limits=settings.child_limits(), given=given,
                              data=data, files=materialized if data is not None else None)
        record_decision(results, decision.test_files, decision.flags, decision.notes, confined)
        return results, [flag.text() for flag in decision.flags]

    return verifier

"""The zip's ``run_otter.py`` is the kit's own (``run_otter.py.tmpl``), written by Otter.

Otter Generate renders its ``common/run_otter.py`` template into every zip; Gradescope and
``otter grade``'s image start grading with it. The kit's version must run first there (to put
``files/`` on ``sys.path``, to mend ``otter grade``'s empty metadata file, and to answer when
Otter stops without results), and ``otter assign`` on the kept master must give the same zip
as ``make assign``. So the plugin, which Otter instantiates during ``otter assign``, hands
Otter the kit's template in place of its own for that one run: Otter still renders and zips
it, with its own context.
"""

from pathlib import Path

OTTER_VERSION = "7.0.0"  # the template replaced, and how it is fetched, are this version's
OTTERS_TEMPLATE = "common/run_otter.py"
KIT_TEMPLATE = Path(__file__).with_name("run_otter.py.tmpl")


class UnsupportedOtter(RuntimeError):
    """The installed Otter is not the one whose template the kit knows how to replace."""


def use_kit_run_otter():
    """Until ``restore_otters_templates``, Otter's ``run_otter.py`` template is the kit's."""
    import otter
    from otter import generate

    if otter.__version__ != OTTER_VERSION:
        raise UnsupportedOtter(
            f"kit_autograder builds its zip with Otter-Grader {OTTER_VERSION}, and this is "
            f"{otter.__version__}: install otter-grader=={OTTER_VERSION} and run otter assign again.")
    environment = generate.JINJA_ENV
    if "get_template" in vars(environment):
        return
    otters_get_template = environment.get_template
    kit = environment.from_string(KIT_TEMPLATE.read_text(encoding="utf-8"))

    def get_template(name, *args, **kwargs):
        return kit if name == OTTERS_TEMPLATE else otters_get_template(name, *args, **kwargs)

    # An attribute of Otter's one Environment, shadowing its method until restored: no file
    # or class of Otter changes.
    environment.get_template = get_template


def restore_otters_templates():
    """Otter's own templates again; returns whether the kit's had been in place."""
    from otter import generate

    return vars(generate.JINJA_ENV).pop("get_template", None) is not None

"""Gradescope's «Export Submissions»: one folder per submission and a YAML file naming them.

The export (a zip, often inside one ``assignment_<id>_export/`` folder) holds
``submission_metadata.yml``, whose top-level keys are the submission folders
(``submission_<id>``), each with ``:submitters:``, a list of ``:name:``, ``:sid:`` (the
student id the course gave) and ``:email:``, and ``:created_at:``. The YAML comes from Ruby and
may carry Ruby tags (``!ruby/object:…``); they are read as plain values.
"""

import yaml

from .entries import Upload
from .tree import MAX_METADATA_BYTES

METADATA = "submission_metadata.yml"


class _Loader(yaml.SafeLoader):
    """Safe YAML that reads any tag (Ruby's objects) as the plain value under it."""


def _untagged(loader, suffix, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_Loader.add_multi_constructor("!", _untagged)


def named_like(names):
    return METADATA in names


def uploads(tree):
    """Every submission's ``Upload``, or None when ``tree`` is not a Gradescope export."""
    metadata = next((item for item in tree.items if item.path == METADATA), None)
    if metadata is None:
        return None
    data = tree.read(metadata, MAX_METADATA_BYTES)
    try:
        listed = yaml.load(data[:MAX_METADATA_BYTES].decode("utf-8", "replace"), Loader=_Loader)
    except yaml.YAMLError as exc:
        raise ValueError(f"{METADATA} is not readable YAML: {exc}") from None
    if not isinstance(listed, dict):
        return None
    by_folder = {}
    for item in tree.items:
        if len(item.parts) > 1:
            by_folder.setdefault(item.parts[0], []).append(item)
    result, notes = [], []
    for folder, details in listed.items():
        submitters = (details or {}).get(":submitters") or [] if isinstance(details, dict) else []
        names = [str(s.get(":name") or "").strip() for s in submitters if isinstance(s, dict)]
        ids = [str(s.get(":sid") or "").strip() for s in submitters if isinstance(s, dict)]
        result.append(Upload(" / ".join(n for n in names if n) or None,
                             " / ".join(i for i in ids if i) or None,
                             origin=str(folder), files=by_folder.pop(str(folder), [])))
    notes += [f"ignored, not listed in {METADATA}: {folder}/" for folder in sorted(by_folder)]
    return result, notes

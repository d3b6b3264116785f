"""Gradescope's «Export Submissions»: one folder per submission and a YAML file naming them.

The export (a zip, often inside one ``assignment_<id>_export/`` folder) holds
``submission_metadata.yml``, whose top-level keys are the submission folders
(``submission_<id>``), each with ``:submitters:``, a list of ``:name:``, ``:sid:`` (the
student id the course gave) and ``:email:``, and ``:created_at:``. The YAML comes from Ruby and
may carry Ruby tags (``!ruby/object:…``); they are read as plain values.
"""

import yaml

from .entries import Found, Notice, Upload
from .tree import MAX_METADATA_BYTES

METADATA = "submission_metadata.yml"


class _Loader(yaml.SafeLoader):
    """Safe YAML that reads any tag (Ruby's objects) as the plain value under it, and refuses
    aliases: Gradescope writes none, and a few nested ``*a`` make a file of kilobytes expand
    into billions of values (the «billion laughs»)."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not read",
                                              event.start_mark)
        return super().compose_node(parent, index)


def _untagged(loader, suffix, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_Loader.add_multi_constructor("!", _untagged)


def fits(name, names=()):
    """With its metadata file, every entry of an export is the export's (the YAML says which
    folders are submissions, and the rest are reported as not listed)."""
    return METADATA in names


def partial_matters(fitting, names):
    return False


def uploads(tree, roster=None):
    """Every submission's ``Upload``, or None when ``tree`` is not a Gradescope export."""
    metadata = next((item for item in tree.items if item.path == METADATA), None)
    if metadata is None:
        return None
    data = tree.read(metadata, MAX_METADATA_BYTES)
    if len(data) > MAX_METADATA_BYTES:
        raise ValueError(f"{METADATA} is over {MAX_METADATA_BYTES // 2**20} MiB: not an export's")
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
        upload = Upload(" / ".join(n for n in names if n) or None,
                        " / ".join(i for i in ids if i) or None,
                        origin=str(folder), files=by_folder.pop(str(folder), []))
        if len(submitters) > 1:  # a group submission: every submitter gets its grade
            upload.members = list(zip(names, ids))
        result.append(upload)
    ignored = [(item.path, "Gradescope's list of submissions" if item is metadata
                else "not part of Gradescope's export")
               for item in tree.items if len(item.parts) == 1]
    ignored += [(item.path, f"not listed in {METADATA}")
               for folder in sorted(by_folder) for item in by_folder[folder]]
    notices = [Notice("not graded", f"{folder}/: not listed in {METADATA}, not graded",
                      f"{folder}/: no figura en {METADATA}; no se ha evaluado")
               for folder in sorted(by_folder)]
    return Found(result, notes=notes, notices=notices, ignored=ignored)

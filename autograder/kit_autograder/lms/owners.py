"""Who gets each graded row's grade in the LMS's file: the student it is, or every member of
the team it is, as the LMS's own membership says (``make export``).

make grade recorded who handed in each file (``OUT/submissions.json``). The worksheet (or
gradebook) given to make export says who is who now, and its group column (Moodle's «Grupo»),
a Canvas group column or a groups CSV (``ROSTER=``) says who is in which team: membership is
read wherever the LMS gives it, at grade time or at export time.

* Moodle names a team's folder after its group (``<group>_<group id>_…``). A row graded as a
  team's goes to every member of that group. A row graded as a participant's goes to that
  participant when the worksheet gives the number that name; where no participant's own folder
  is in the download and the name is a group's, the download was a team download graded
  without the worksheet, and the row is the group's.
* Canvas names a group's file after the group, with one member's user id
  (Assignment#representatives). With membership, every member of that member's group gets the
  grade; without it, a file whose name is not its user's stays withheld, with a hint. A file
  named after its own student goes to the whole group only when it is the group's one file.

A name is never enough to make a row a team's where the download has participants' own folders,
and a student claimed by two rows gets neither grade: ``export.py`` withholds and says so.
"""

from dataclasses import dataclass, field
from typing import Optional

from .roster import canvas_name, download_name, same_canvas_name, shown_name


@dataclass
class Owner:
    student_id: str
    name: str  # as the worksheet (or the membership) names the person
    entry: dict  # the manifest's entry whose grade this is
    group: Optional[str] = None  # the team's name, when the grade is a team's


@dataclass
class Decided:
    owners: list = field(default_factory=list)  # Owner
    mismatched: list = field(default_factory=list)  # (entry, student id, worksheet's name)
    without_members: list = field(default_factory=list)  # team entries nobody is known in
    clashes: list = field(default_factory=list)  # (entry, [group names it cannot tell apart])
    group_hint: bool = False  # Canvas: a name that is not its user's, and no membership


def decide(lms, entries, names, membership) -> Decided:
    """``entries``: the manifest's entries that have a row; ``names``: ``{student id: name}``
    of the worksheet; ``membership``: a Roster with groups, or None."""
    decided = Decided()
    if lms == "moodle":
        _moodle(entries, names, membership, decided)
    else:
        _canvas(entries, names, membership, decided)
    return decided


def _members(entry, people, names, group, decided):
    for name, student_id in people:
        decided.owners.append(Owner(student_id, names.get(student_id) or name or "", entry,
                                    group))


def _moodle(entries, names, membership, decided):
    same = lambda listed, written: download_name(listed) == download_name(written)
    # A download is a team download or a participants' one as a whole (moodle._identify):
    # a participant's own folder anywhere means no participant's row becomes a team's.
    owns = any(e.get("student_id") in names and e.get("student_name")
               and same(names[e["student_id"]], e["student_name"]) for e in entries)
    for entry in entries:
        student_id, written = entry.get("student_id"), entry.get("student_name")
        if entry.get("members"):
            _members(entry, [tuple(m) for m in entry["members"]], names, entry.get("group"),
                     decided)
        elif entry.get("group") and not student_id:
            _team(entry, entry["group"], names, membership, decided)
        elif student_id:
            listed = names.get(student_id)
            if listed is not None and (not written or same(listed, written)):
                decided.owners.append(Owner(student_id, listed, entry))
            elif not owns and written and membership is not None and \
                    any(membership.team(written)):
                _team(entry, written, names, membership, decided)
            elif listed is None:
                decided.owners.append(Owner(student_id, written or "", entry))  # no row
            else:
                decided.mismatched.append((entry, student_id, listed))


def _team(entry, group, names, membership, decided):
    members, clash = membership.team(group) if membership is not None else ([], [])
    if clash:
        decided.clashes.append((entry, clash))
    elif members:
        _members(entry, [(p.name, p.student_id) for p in members], names, group, decided)
    else:
        decided.without_members.append(entry)


def _canvas(entries, names, membership, decided):
    teams = {}
    for entry in entries:
        group, people = entry.get("group"), [tuple(m) for m in entry.get("members") or []]
        student_id = entry.get("student_id")
        if not people and membership is not None and student_id and \
                membership.group_of(student_id):
            group = membership.group_of(student_id)
            people = [(p.name, p.student_id) for p in membership.members_of(group)]
        teams[id(entry)] = (group, people)
    # A group assignment has one file per group: where two members of a group each have
    # theirs, the assignment is an individual one, and a file named after its student is
    # that student's alone, whatever groups the course has.
    per_group = {}
    for group, people in teams.values():
        if people:
            per_group[group] = per_group.get(group, 0) + 1
    for entry in entries:
        student_id, written = entry.get("student_id"), entry.get("student_name")
        if not student_id:
            continue  # anonymous, or a name that reads as several users: nobody's
        listed = names.get(student_id)
        group, people = teams[id(entry)]
        own = not written or listed is None or same_canvas_name(listed, written)
        groups_file = bool(people) and canvas_name(group) == shown_name(written).casefold()
        if groups_file or (people and own and per_group[group] == 1):
            _members(entry, people, names, group, decided)
        elif own:
            decided.owners.append(Owner(student_id, listed or written or "", entry))
        else:
            decided.mismatched.append((entry, student_id, listed))
            decided.group_hint = decided.group_hint or membership is None

"""``model-props expectations``: the expectation snapshot against the seed study's current verdicts.

Without ``--update`` it prints the diff and exits 1 where the snapshot is out of date (a check for CI or a
reviewer); with ``--update`` it writes the snapshot and prints the same diff, which is what a reviewer reads before
committing it. The snapshot compared and written is the one in the user's recipes folder (``--recipes DIR``) where
there is one, never the installed package's built-in snapshot, which the tests of DIR's study would not read; without
a recipes folder it is the one beside the built-in study. A stale study entry is an error naming the command that regenerates the
study: the snapshot is only ever written from a study that speaks for the current code.
"""

from __future__ import annotations

from pathlib import Path

from ..claims import list_claims
from ..config.settings import Settings
from ..errors import StudyError
from ..verdicts.snapshot import changed_parts, diff, load_snapshot, render, snapshot_name, snapshot_of_study
from ..verdicts.study import load_study, regenerate

__all__ = ["compare_snapshot"]


def compare_snapshot(settings: Settings, *, update: bool = False) -> int:
    """Print the diff between the snapshot and the study's verdicts; write the snapshot where ``update``. The exit
    status: 0 when the snapshot matches (or was updated), 1 when it differs and was not."""
    profile = settings.profile_data
    user_dir = settings.recipes.user_dir
    study = load_study(profile.name, user_dir)
    if study is None:
        raise StudyError(f"profile {profile.name!r} has no seed study to take expectations from; run "
                         f"{regenerate(profile.name)}")  # fmt: skip
    claims = [c for c in list_claims() if c.id in study.claims]
    for claim in claims:
        study.check(claim, profile)
    new = snapshot_of_study(study, claims)
    path = (user_dir or Path(study.source).parent) / snapshot_name(profile.name)
    old = load_snapshot(profile.name, path.parent)
    if old is not None and Path(old.source).resolve() != path.resolve():  # the built-in one: not the snapshot here
        old = None
    before = path.read_text() if path.is_file() else ""
    text = render(new)
    lines = diff(before, text, path.name)
    changed = changed_parts(old, new)
    if not changed and lines == []:
        print(f"{path} matches the study's verdicts ({sum(len(p) for p in new.entries.values())} parts)")
        return 0
    print("\n".join(lines))
    print(f"{len(changed)} part(s) change:" + "".join(f"\n  {c}" for c in changed))
    if update:
        path.write_text(text)
        print(f"wrote {path}: review the diff above before committing it")
        return 0
    recipes = f" --recipes {user_dir}" if user_dir is not None else ""
    print(f"{path} is out of date; to accept the study's verdicts: model-props expectations --update "
          f"--profile {profile.name}{recipes}")  # fmt: skip
    return 1
